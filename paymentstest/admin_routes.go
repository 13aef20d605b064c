package paymentstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
)

// The admin routes themselves; admin.go routes to them and checks their input.

// Clock.

type adminClockJSON struct {
	Now string `json:"now"`
}

// adminClock is GET /_sandbox/clock.
func (s *Server) adminClock(*apiRequest) *response {
	return s.adminOK("The server's time", adminClockJSON{Now: stamp(s.clock.now())})
}

// adminAdvance is POST /_sandbox/clock/advance {"seconds": 301} or
// {"duration": "5m1s"}.
func (s *Server) adminAdvance(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, false)
	if bad != nil {
		return bad
	}
	o.only("seconds", "duration")
	var (
		d     time.Duration
		field = "seconds"
	)
	switch {
	case o.present("seconds") && o.present("duration"):
		p.add("duration", "give seconds or duration, not both")
	case o.present("duration"):
		field = "duration"
		var text string
		if json.Unmarshal(o.m["duration"], &text) != nil {
			p.add("duration", "must be a string holding a Go duration such as \"5m1s\"")
			break
		}
		v, err := time.ParseDuration(strings.TrimSpace(text))
		switch {
		case err != nil:
			p.add("duration", "must be a Go duration such as \"5m1s\" or \"-1h\"")
		case v > maxClockOffset || v < -maxClockOffset:
			p.add("duration", "must be at most %s either way", maxClockOffsetText)
		default:
			d = v
		}
	case o.present("seconds"):
		var text string
		if json.Unmarshal(o.m["seconds"], &text) == nil {
			_, numErr := decimal.NewFromString(strings.TrimSpace(text))
			if _, err := time.ParseDuration(strings.TrimSpace(text)); numErr != nil && err == nil {
				p.add("seconds", "must be a number of seconds; send a Go duration such as %q as duration", text)
				break
			}
		}
		d, _ = o.seconds("seconds", -maxClockOffset, maxClockOffset)
	default:
		p.add("seconds", "is required (a number of seconds, or duration: a Go duration such as \"5m1s\")")
	}
	if len(*p) > 0 {
		return s.invalid(*p)
	}
	if !s.clock.advanceWithin(d, maxClockOffset) {
		return s.invalid(problems{{Field: field, Message: "would move the server's clock more than " +
			maxClockOffsetText + " away from its base clock in total"}})
	}
	return s.adminOK("Clock advanced", adminClockJSON{Now: stamp(s.clock.now())})
}

// advanceWithin is advance, refused (false) when the total offset would
// exceed lim either way.
func (c *clock) advanceWithin(d, lim time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.offset + d
	if (d > 0 && n < c.offset) || (d < 0 && n > c.offset) || n > lim || n < -lim {
		return false
	}
	c.offset = n
	return true
}

// Virtual accounts.

// adminIncomingPayment is POST
// /_sandbox/virtual-accounts/{account_number}/incoming-payments
// {"amount": 5000.00, "currency": "NGN"}: SimulateIncomingPayment.
func (s *Server) adminIncomingPayment(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, false)
	if bad != nil {
		return bad
	}
	o.only("amount", "currency")
	amount, ok := o.amount("amount")
	if !ok && !o.present("amount") {
		p.add("amount", "is required")
	}
	currency := o.str("currency")
	p.currency("currency", currency)
	if len(*p) > 0 {
		return s.invalid(*p)
	}

	s.mu.Lock()
	va := s.st.accountByNumber[rq.param]
	var accountCurrency string
	if va != nil {
		accountCurrency = va.Currency
	}
	s.mu.Unlock()
	if va == nil {
		return s.notFound(fmt.Sprintf("virtual account with number %q", rq.param))
	}
	if currency != "" && currency != accountCurrency {
		return s.invalid(problems{{Field: "currency", Message: "must be the account's currency, " + accountCurrency}})
	}
	in, err := s.SimulateIncomingPayment(rq.param, amount, currency)
	switch {
	case errors.Is(err, errClosed):
		return s.fail(http.StatusServiceUnavailable, payments.CodeShuttingDown, "the server is shutting down")
	case err != nil:
		return s.fail(http.StatusUnprocessableEntity, payments.CodeValidationFailed, err.Error())
	}
	return s.adminOK("Incoming payment received", in.json())
}

// Faults.

var faultKinds = map[string]faultKind{
	faultStatus.String():        faultStatus,
	faultDrop.String():          faultDrop,
	faultDropAfterWork.String(): faultDropAfterWork,
	faultLatency.String():       faultLatency,
}

type adminFaultJSON struct {
	Kind              string `json:"kind"`
	Status            int    `json:"status,omitempty"`
	RetryAfterSeconds int64  `json:"retry_after_seconds,omitempty"`
	LatencyMS         int64  `json:"latency_ms,omitempty"`
	Times             int    `json:"times"`
	Method            string `json:"method,omitempty"`
	Path              string `json:"path,omitempty"`
}

type adminFaultsJSON struct {
	// Fault is the fault just injected, as the server understood it.
	Fault    *adminFaultJSON `json:"fault,omitempty"`
	Pending  int             `json:"pending"`
	Injected int             `json:"injected"`
}

func (s *Server) faultsState(f *adminFaultJSON) adminFaultsJSON {
	return adminFaultsJSON{Fault: f, Pending: s.pendingFaults(), Injected: s.faultsInjected()}
}

// adminFaults is GET /_sandbox/faults.
func (s *Server) adminFaults(*apiRequest) *response {
	return s.adminOK("Faults", s.faultsState(nil))
}

// adminClearFaults is DELETE /_sandbox/faults: ClearFaults.
func (s *Server) adminClearFaults(*apiRequest) *response {
	s.ClearFaults()
	return s.adminOK("Faults cleared", s.faultsState(nil))
}

// adminInjectFault is POST /_sandbox/faults: InjectFault.
func (s *Server) adminInjectFault(rq *apiRequest) *response {
	o, p, bad := s.adminObject(rq, false)
	if bad != nil {
		return bad
	}
	o.only("kind", "status", "retry_after_seconds", "latency_ms", "times", "method", "path")
	var kinds []string
	for k := range faultKinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	name := o.required("kind", maxCodeLen)
	kind := faultKinds[name]
	if name != "" && kind == 0 {
		p.add("kind", "must be one of %s", strings.Join(kinds, ", "))
	}
	f := Fault{Times: 1, Drop: kind == faultDrop || kind == faultDropAfterWork, AfterWork: kind == faultDropAfterWork}
	out := adminFaultJSON{Kind: name}

	// applies reports whether a member is present and applies to the kind,
	// and reports one that does not, or that the kind requires.
	applies := func(field string, want faultKind) bool {
		if !o.present(field) {
			if kind == want && (field == "status" || field == "latency_ms") {
				p.add(field, "is required for kind %s", want)
			}
			return false
		}
		if kind != 0 && kind != want {
			p.add(field, "applies only to kind %s", want)
			return false
		}
		return true
	}
	if applies("status", faultStatus) {
		if n, ok := o.integer("status", 400, 599); ok {
			f.Status, out.Status = int(n), int(n)
		}
	}
	if applies("retry_after_seconds", faultStatus) {
		if n, ok := o.integer("retry_after_seconds", 0, maxFaultRetryAfter); ok {
			f.RetryAfter, out.RetryAfterSeconds = time.Duration(n)*time.Second, n
		}
	}
	if applies("latency_ms", faultLatency) {
		if n, ok := o.integer("latency_ms", 1, maxFaultLatencyMS); ok {
			f.Latency, out.LatencyMS = time.Duration(n)*time.Millisecond, n
		}
	}
	if o.present("times") {
		if n, ok := o.integer("times", 1, maxFaultTimes); ok {
			f.Times = int(n)
		}
	}
	out.Times = f.Times
	if m := strings.ToUpper(strings.TrimSpace(o.str("method"))); m != "" {
		if !httpMethodPattern.MatchString(m) {
			p.add("method", "must be an HTTP method such as POST")
		}
		f.Method, out.Method = m, m
	}
	if path := o.text("path", maxTextLen); path != "" {
		switch {
		case !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?# \t\r\n"):
			p.add("path", "must be a path such as /payments/initiate, without a query")
		case isAdminPath(path):
			p.add("path", "admin requests are never faulted")
		}
		f.Path, out.Path = path, path
	}
	if len(*p) > 0 {
		return s.invalid(*p)
	}
	if err := s.InjectFault(f); err != nil { // checked above: cannot happen
		return s.invalid(problems{{Field: "kind", Message: err.Error()}})
	}
	return s.adminOK("Fault injected", s.faultsState(&out))
}
