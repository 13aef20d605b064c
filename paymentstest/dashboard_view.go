package paymentstest

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/eventkind"
)

// The dashboard's view of the server: what the page template shows. Every
// value is text that html/template escapes; nothing here is a secret (the
// signature is masked) or personal data whole (dashboard_mask.go).

// dashboardEventLimit is how many events the page lists, newest first.
const dashboardEventLimit = 200

type dashView struct {
	Token      string
	Now        string
	WebhookURL string
	Scheme     string
	Retries    string
	Paused     bool
	Remote     bool
	Notice     string
	Problem    string

	Kind, Resource string // the events' filter
	Kinds          []string
	Balances       []balanceView
	OtherBalance   string // every currency not listed
	Threshold      string
	Recipients     []recipientView
	Payments       []paymentView
	Accounts       []accountView
	Events         []eventView
	EventsShown    int
	EventsTotal    int
}

type balanceView struct {
	Currency, Amount string
	Low              bool
}

type recipientView struct {
	ID, Name, Account, Currency, Bank, Verification, Limit string
}

type paymentView struct {
	ID, Reference, Recipient, RecipientID, Amount, Currency, Status string
	// State tells an unconfirmed quote ("quote, not confirmed" or "quote
	// expired") from a confirmed payment still in progress ("processing")
	// though the service calls both pending; StateClass styles it.
	State, StateClass                    string
	QuoteID, Fee, Total, Rate, ExpiresAt string
	Confirmed, Pending                   bool
	Timeline                             []timelineItem
}

type timelineItem struct {
	At, Kind, EventID string
}

type accountView struct {
	ID, Name, Number, Currency, Bank string
	Received                         []incomingView
}

type incomingView struct {
	At, Amount, Currency, Reference string
}

type eventView struct {
	ID, Kind, At, Resource string
	// Body is the body sent, indented, its personal data masked
	// (dashboard_mask.go).
	Body       string
	Deliveries []deliveryView
}

type deliveryView struct {
	URL, Status, NextRetry string
	Redelivery             bool
	Attempts               []attemptView
}

type attemptView struct {
	At, Scheme, Signature, Result, Latency, Body string
	Headers                                      []string // "Name: value" of the receiver's answer
	OK                                           bool
}

// dashboardView reads the server's state for the page, with the events
// filtered by kind and the events and payments by resource: an id, the
// short id the page shows (its first characters), or a payment's reference
// ("" for any), and the problem or notice an action left. Every text of it
// has its personal data masked (dashboard_mask.go).
func (s *Server) dashboardView(kind, resource, problem, notice string) *dashView {
	v := &dashView{
		Token: s.dash.token, Now: stamp(s.clock.now()), Remote: s.dash.remote, Kind: kind, Resource: resource,
		Problem: problem, Notice: notice,
	}
	for _, k := range eventkind.All() {
		v.Kinds = append(v.Kinds, string(k))
	}
	personal := personalSet{}
	s.readState(v, personal)
	s.readEvents(v, kind, resource, personal)
	if resource != "" {
		v.Payments = slices.DeleteFunc(v.Payments, func(p paymentView) bool {
			return !idMatches(p.ID, resource) && p.Reference != resource && !idMatches(p.RecipientID, resource)
		})
	}
	personal.scrub(v)
	return v
}

// minShortID is the shortest id prefix the filter takes for an id.
const minShortID = 4

// idMatches reports whether q names id: the whole id, or its first
// characters (at least minShortID), as the page's short ids show them.
func idMatches(id, q string) bool {
	return id != "" && (id == q || (len(q) >= minShortID && strings.HasPrefix(id, q)))
}

// paymentState tells apart what the service calls pending alike: a quote
// not confirmed yet (or expired, which confirm refuses), and a confirmed
// payment still processing.
func paymentState(p *payment, now time.Time) (state, class string) {
	switch {
	case p.Status != payments.PaymentStatusPending:
		return string(p.Status), string(p.Status)
	case p.executed():
		return "processing", "processing"
	case !now.Before(p.Quote.ExpiresAt):
		return "quote expired", "expired"
	}
	return "quote, not confirmed", "quote"
}

// readState fills in the recipients, payments, accounts and balances.
func (s *Server) readState(v *dashView, personal personalSet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := map[string]string{}
	for _, r := range s.st.recipients {
		personal.addRecipient(r)
		names[r.ID] = r.AccountName
		rv := recipientView{
			ID: r.ID, Name: r.AccountName, Account: maskAccount(r.AccountNumber), Currency: r.AccountCurrency,
			Bank: r.AccountBankName, Verification: [...]string{"verified", "verifying", "verification failed"}[r.Verify], Limit: "none",
		}
		if r.Limit != nil {
			rv.Limit = money(*r.Limit)
		}
		v.Recipients = append(v.Recipients, rv)
	}
	now := s.clock.now()
	for _, p := range s.st.payments {
		q := p.Quote
		state, class := paymentState(p, now)
		v.Payments = append(v.Payments, paymentView{
			State: state, StateClass: class, RecipientID: p.RecipientID,
			ID: p.ID, Reference: p.Reference, Recipient: names[p.RecipientID], Amount: money(p.Amount), Currency: p.Currency,
			Status: string(p.Status), QuoteID: q.ID, Fee: money(q.Fee), Total: money(q.TotalAmount),
			Rate: q.ExchangeRate.String(), ExpiresAt: stamp(q.ExpiresAt), Confirmed: p.executed(),
			Pending: p.Status == payments.PaymentStatusPending,
		})
	}
	byAccount := map[string]int{}
	for _, va := range s.st.accounts {
		personal.addAccount(va)
		byAccount[va.ID] = len(v.Accounts)
		v.Accounts = append(v.Accounts, accountView{
			ID: va.ID, Name: va.AccountName, Number: maskAccount(va.AccountNumber), Currency: va.Currency, Bank: va.BankName,
		})
	}
	for _, in := range s.st.incoming {
		personal.account(in.AccountNumber)
		personal.account(in.PayerAccount)
		if i, ok := byAccount[in.VirtualAccountID]; ok {
			v.Accounts[i].Received = append(v.Accounts[i].Received, incomingView{
				At: stamp(in.CreatedAt), Amount: money(in.Amount), Currency: in.Currency, Reference: in.Reference,
			})
		}
	}
	m := &s.st.money
	for c, amount := range m.held {
		v.Balances = append(v.Balances, balanceView{Currency: c, Amount: money(amount), Low: amount.LessThan(m.threshold)})
	}
	slices.SortFunc(v.Balances, func(a, b balanceView) int { return strings.Compare(a.Currency, b.Currency) })
	v.OtherBalance, v.Threshold = money(m.start), money(m.threshold)
}

// eventRefs are the ids an event's data names: its resource, and the
// account or recipient it belongs to.
type eventRefs struct {
	ID               string `json:"id"`
	RecipientID      string `json:"recipient_id"`
	VirtualAccountID string `json:"virtual_account_id"`
	Reference        string `json:"reference"`
}

// names reports whether q names the event's resource, its recipient or
// account (by id or short id), or its reference.
func (e eventRefs) names(q string) bool {
	return idMatches(e.ID, q) || idMatches(e.RecipientID, q) || idMatches(e.VirtualAccountID, q) ||
		(e.Reference != "" && e.Reference == q)
}

// readEvents fills in the events (newest first, filtered), each with its
// deliveries, and the payments' timelines.
func (s *Server) readEvents(v *dashView, kind, resource string, personal personalSet) {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	byEvent := map[string][]*Delivery{}
	d.deliveries.each(func(_ int, dl *Delivery) { byEvent[dl.EventID] = append(byEvent[dl.EventID], dl) })
	payment := map[string]int{}
	for i, p := range v.Payments {
		payment[p.ID] = i
	}
	var all []eventView
	d.events.each(func(_ int, ev Event) {
		var refs eventRefs
		_ = json.Unmarshal(ev.Data, &refs) // the server's own JSON
		if i, ok := payment[refs.ID]; ok && strings.HasPrefix(string(ev.Type), "payment.") {
			v.Payments[i].Timeline = append(v.Payments[i].Timeline, timelineItem{At: stamp(ev.CreatedAt), Kind: string(ev.Type), EventID: ev.ID})
		}
		// Every body is read, shown or not, so that its personal values
		// are masked wherever else the page has them.
		body := shownBody(ev.Body, personal)
		if (kind != "" && string(ev.Type) != kind) || (resource != "" && !refs.names(resource) && !idMatches(ev.ID, resource)) {
			return
		}
		all = append(all, eventView{ID: ev.ID, Kind: string(ev.Type), At: stamp(ev.CreatedAt), Resource: refs.ID, Body: body})
	})
	v.EventsTotal = len(all)
	slices.Reverse(all)
	if len(all) > dashboardEventLimit {
		all = all[:dashboardEventLimit]
	}
	for i := range all {
		for _, dl := range byEvent[all[i].ID] {
			all[i].Deliveries = append(all[i].Deliveries, deliveryViewOf(dl))
		}
	}
	v.Events, v.EventsShown = all, len(all)
	v.WebhookURL, v.Scheme, v.Paused = strings.Join(d.urls, ", "), string(d.scheme), d.paused
	waits := make([]string, len(d.retries))
	for i, w := range d.retries {
		waits[i] = w.String()
	}
	v.Retries = strings.Join(waits, ",")
}

func deliveryViewOf(dl *Delivery) deliveryView {
	out := deliveryView{URL: dl.URL, Status: string(dl.Status), Redelivery: dl.Redelivery}
	if dl.Status == DeliveryPending && !dl.NextAttemptAt.IsZero() {
		out.NextRetry = stamp(dl.NextAttemptAt)
	}
	for _, a := range dl.Attempts {
		av := attemptView{
			At: stamp(a.At), Scheme: string(a.Scheme), Signature: maskSignature(a.Signature),
			Latency: fmt.Sprintf("%d ms", a.Duration.Round(time.Millisecond).Milliseconds()), Body: a.ResponseBody,
			OK: a.StatusCode >= 200 && a.StatusCode <= 299,
		}
		for _, name := range slices.Sorted(maps.Keys(a.ResponseHeader)) {
			for _, hv := range a.ResponseHeader[name] {
				av.Headers = append(av.Headers, name+": "+hv)
			}
		}
		switch {
		case a.Error != "":
			av.Result = "error: " + a.Error
		default:
			av.Result = fmt.Sprintf("HTTP %d", a.StatusCode)
		}
		out.Attempts = append(out.Attempts, av)
	}
	return out
}

// longToken is a run of signature characters long enough to be a MAC.
var longToken = regexp.MustCompile(`[A-Za-z0-9+/_=-]{16,}`)

// maskSignature keeps the shape of a signature header (its t= and
// version labels) and the first 6 characters of each signature.
func maskSignature(sig string) string {
	return longToken.ReplaceAllStringFunc(sig, func(t string) string {
		if i := strings.LastIndexAny(t, "=,"); i >= 0 && i < len(t)-16 && strings.HasPrefix(t, "v1") {
			return t[:i+1] + t[i+1:i+7] + "…"
		}
		return t[:6] + "…"
	})
}
