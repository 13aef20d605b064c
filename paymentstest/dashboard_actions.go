package paymentstest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// dashboardAction runs one of the dashboard's buttons: a POST of its form,
// checked against cross-site requests. Either way it redirects to the page
// (post, redirect, get): with a notice after a success, with the problem
// after bad input, which changes nothing. The browser is then on the page's
// own address, so that its live updates go on and a reload shows the page
// (TestDashboardRefusalRedirectsToThePage).
func (s *Server) dashboardAction(w http.ResponseWriter, r *http.Request, name string) {
	act, ok := dashboardActions[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxAdminBody)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	if msg, status := s.dash.checkAction(r); status != 0 {
		if status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", "POST")
		}
		http.Error(w, msg, status)
		return
	}
	notice, err := act(s, r)
	if err != nil {
		http.Redirect(w, r, dashboardPath+"?problem="+s.dash.notice(strings.TrimPrefix(err.Error(), "paymentstest: ")), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, dashboardPath+"?notice="+s.dash.notice(notice), http.StatusSeeOther)
}

// dashNotFound is an action's refusal of an id that names nothing: 404.
type dashNotFound struct{ msg string }

func (e *dashNotFound) Error() string { return e.msg }

type dashboardActionFunc func(s *Server, r *http.Request) (notice string, err error)

var dashboardActions = map[string]dashboardActionFunc{
	"redeliver": func(s *Server, r *http.Request) (string, error) {
		id, to := strings.TrimSpace(r.PostFormValue("event")), strings.TrimSpace(r.PostFormValue("url"))
		dl, err := s.redeliverTo(id, to)
		switch {
		case errors.Is(err, errUnknownEvent):
			return "", &dashNotFound{fmt.Sprintf("no event %q in the event log: nothing was sent", id)}
		case errors.Is(err, errNoWebhookURL):
			return "", errors.New("no webhook URL is set: set one, or give a URL to redeliver to")
		case err != nil:
			return "", err
		}
		return fmt.Sprintf("Event %s queued for delivery again to %s", id, dl.URL), nil
	},
	"trigger": func(s *Server, r *http.Request) (string, error) {
		kind := payments.EventType(strings.TrimSpace(r.PostFormValue("kind")))
		ev, err := s.triggerTestEvent(kind, strings.TrimSpace(r.PostFormValue("resource")))
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Event %s %s produced", kind, ev.ID), nil
	},
	"pause": func(s *Server, r *http.Request) (string, error) {
		if r.PostFormValue("pause") == "1" {
			s.pauseDeliveries()
			return "Deliveries paused: events are queued until you resume", nil
		}
		s.resumeDeliveries()
		return "Deliveries resumed", nil
	},
	"webhook-url": func(s *Server, r *http.Request) (string, error) {
		u := strings.TrimSpace(r.PostFormValue("url"))
		urls := splitWebhookURLs(u)
		if err := s.setWebhookURLs(urls); err != nil {
			return "", fmt.Errorf("%q: %s", u, strings.TrimPrefix(err.Error(), "paymentstest: SetWebhookURL: "))
		}
		switch len(urls) {
		case 0:
			return "Webhook deliveries turned off", nil
		case 1:
			return "Webhooks now go to " + urls[0], nil
		}
		return "Webhooks now go round robin to " + strings.Join(urls, ", "), nil
	},
	"retries": func(s *Server, r *http.Request) (string, error) {
		text := strings.TrimSpace(r.PostFormValue("waits"))
		var waits []time.Duration
		if text != "" && !strings.EqualFold(text, "none") {
			for _, part := range strings.Split(text, ",") {
				w, err := time.ParseDuration(strings.TrimSpace(part))
				if err != nil {
					return "", fmt.Errorf("retry waits %q: give Go durations separated by commas, such as 1s,2s,4s,8s", text)
				}
				waits = append(waits, w)
			}
		}
		if err := s.setWebhookRetries(waits...); err != nil {
			return "", err
		}
		return fmt.Sprintf("Retry schedule set: %d retries", len(waits)), nil
	},
	"advance": func(s *Server, r *http.Request) (string, error) {
		text := strings.TrimSpace(r.PostFormValue("duration"))
		d, err := time.ParseDuration(text)
		switch {
		case err != nil:
			return "", fmt.Errorf("advance by %q: give a Go duration such as 5m1s", text)
		case d <= 0:
			return "", fmt.Errorf("advance by %q: the clock only moves forward here", text)
		}
		if !s.clock.advanceWithin(d, maxClockOffset) {
			return "", fmt.Errorf("advance by %q: the clock would move more than %s in total", text, maxClockOffsetText)
		}
		return "Clock advanced to " + stamp(s.clock.now()), nil
	},
	"settle": func(s *Server, r *http.Request) (string, error) {
		id, outcome := r.PostFormValue("payment"), r.PostFormValue("outcome")
		p, err := s.SettlePayment(id, payments.PaymentStatus(outcome))
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Payment %s is now %s", p.ID, p.Status), nil
	},
}
