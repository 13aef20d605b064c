package paymentstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/eventkind"
)

// The admin routes of the dashboard's actions that the older routes did
// not cover: trigger for a resource, pause and resume, settle, and the
// delivery chaos.

// adminRedeliverTo is POST /_sandbox/events/{id}/redeliver, with an
// optional {"url": "..."}: RedeliverTo; data is the new delivery, queued.
func (s *Server) adminRedeliverTo(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, true)
	if bad != nil {
		return bad
	}
	o.only("url")
	u := strings.TrimSpace(o.text("url", maxTextLen))
	if o.present("url") {
		if err := checkWebhookURL(u); err != nil || u == "" {
			p.add("url", "must be an absolute http or https URL, such as http://localhost:8080/webhooks")
		}
	}
	if len(*p) > 0 {
		return s.invalid(*p)
	}
	dl, err := s.redeliverTo(rq.param, u)
	if err != nil {
		return s.redeliverFailure(err, rq.param)
	}
	return s.adminOK("Event queued for delivery again", deliveryJSON(dl))
}

type adminEventJSON struct {
	ID        string `json:"id"`
	Event     string `json:"event"`
	CreatedAt string `json:"created_at"`
}

// adminTrigger is POST /_sandbox/events/trigger {"event":
// "payment.completed", "resource_id": "..."}: TriggerEvent.
func (s *Server) adminTrigger(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, false)
	if bad != nil {
		return bad
	}
	o.only("event", "resource_id")
	kind := o.required("event", maxCodeLen)
	if kind != "" && !eventkind.Known(payments.EventType(kind)) {
		p.add("event", "must be one of %s", strings.Join(eventNames(), ", "))
	}
	resource := strings.TrimSpace(o.text("resource_id", maxTextLen))
	if len(*p) > 0 {
		return s.invalid(*p)
	}
	ev, err := s.triggerTestEvent(payments.EventType(kind), resource)
	switch {
	case errors.Is(err, errUnknownResource):
		return s.fail(http.StatusNotFound, payments.CodeNotFound, strings.TrimPrefix(err.Error(), "paymentstest: "))
	case errors.Is(err, errClosed):
		return s.fail(http.StatusServiceUnavailable, payments.CodeShuttingDown, "the server is shutting down")
	case err != nil:
		return s.internal(err)
	}
	return s.adminOK(fmt.Sprintf("Event %s produced", kind), adminEventJSON{ID: ev.ID, Event: kind, CreatedAt: stamp(ev.CreatedAt)})
}

type adminPausedJSON struct {
	Paused bool `json:"paused"`
}

// adminPause is POST /_sandbox/deliveries/pause: PauseDeliveries.
func (s *Server) adminPause(rq *apiRequest) *response {
	if bad := s.adminNoFields(rq); bad != nil {
		return bad
	}
	s.pauseDeliveries()
	return s.adminOK("Deliveries paused", adminPausedJSON{Paused: true})
}

// adminResume is POST /_sandbox/deliveries/resume: ResumeDeliveries.
func (s *Server) adminResume(rq *apiRequest) *response {
	if bad := s.adminNoFields(rq); bad != nil {
		return bad
	}
	s.resumeDeliveries()
	return s.adminOK("Deliveries resumed", adminPausedJSON{Paused: false})
}

// adminSettle is POST /_sandbox/payments/{id}/settle {"status": "failed"}:
// SettlePayment; data is the payment as its event carries it.
func (s *Server) adminSettle(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, false)
	if bad != nil {
		return bad
	}
	o.only("status")
	status := o.required("status", maxCodeLen)
	p.oneOf("status", status, "completed", "failed", "rejected")
	if len(*p) > 0 {
		return s.invalid(*p)
	}
	_, err := s.SettlePayment(rq.param, payments.PaymentStatus(status))
	switch {
	case errors.Is(err, errUnknownResource):
		return s.notFound(fmt.Sprintf("payment %q", rq.param))
	case errors.Is(err, errNotSettleable):
		return s.fail(http.StatusConflict, codeNotSettleable, strings.TrimPrefix(err.Error(), "paymentstest: "))
	case errors.Is(err, errClosed):
		return s.fail(http.StatusServiceUnavailable, payments.CodeShuttingDown, "the server is shutting down")
	case err != nil:
		return s.internal(err)
	}
	s.mu.Lock()
	data, err := json.Marshal(s.st.paymentByID[rq.param].json())
	s.mu.Unlock()
	if err != nil {
		return s.internal(err)
	}
	return s.ok(http.StatusOK, "Payment settled as "+status, data)
}

// codeNotSettleable is the code of POST /_sandbox/payments/{id}/settle for
// a payment that is not pending after a confirm (errNotSettleable). It is a
// code of the sandbox's admin API only, not of the service, so the SDK has
// no constant for it.
const codeNotSettleable payments.ErrorCode = "payment_not_settleable"

type adminChaosJSON struct {
	Delay        string  `json:"delay"`
	DelaySeconds float64 `json:"delay_seconds"`
	Duplicate    bool    `json:"duplicate"`
	NewestFirst  bool    `json:"newest_first"`
}

func (s *Server) chaosJSON() adminChaosJSON {
	c := s.deliveryChaosSetting()
	return adminChaosJSON{Delay: c.Delay.String(), DelaySeconds: c.Delay.Seconds(), Duplicate: c.Duplicate, NewestFirst: c.NewestFirst}
}

// adminChaos is GET /_sandbox/delivery-chaos.
func (s *Server) adminChaos(*apiRequest) *response {
	return s.adminOK("Delivery chaos", s.chaosJSON())
}

// adminSetChaos is PUT /_sandbox/delivery-chaos {"delay": "2s",
// "duplicate": true, "newest_first": true}: SetDeliveryChaos; a member
// left out is off.
func (s *Server) adminSetChaos(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, true)
	if bad != nil {
		return bad
	}
	o.only("delay", "duplicate", "newest_first")
	var c deliveryChaos
	if o.present("delay") {
		var text string
		if json.Unmarshal(o.m["delay"], &text) == nil {
			d, err := time.ParseDuration(strings.TrimSpace(text))
			if err != nil || d < 0 || d > maxDeliveryDelay {
				p.add("delay", "must be a Go duration from 0s to %s, such as \"2s\"", maxDeliveryDelay)
			}
			c.Delay = d
		} else {
			c.Delay, _ = o.seconds("delay", 0, maxDeliveryDelay)
		}
	}
	for field, dst := range map[string]*bool{"duplicate": &c.Duplicate, "newest_first": &c.NewestFirst} {
		if o.present(field) && json.Unmarshal(o.m[field], dst) != nil {
			p.add(field, "must be true or false")
		}
	}
	if len(*p) > 0 {
		return s.invalid(*p)
	}
	if err := s.setDeliveryChaos(c); err != nil { // checked above: cannot happen
		return s.invalid(problems{{Field: "delay", Message: err.Error()}})
	}
	return s.adminOK("Delivery chaos set", s.chaosJSON())
}
