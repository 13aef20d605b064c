package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// result is what doctor found about one assumption.
type result string

// The results of a row.
const (
	holds     result = "holds"
	differs   result = "differs"
	unchecked result = "could_not_check"
)

// topic is one row of docs/assumptions.md, as doctor reports it.
type topic struct {
	name     string // the Topic column, word for word
	probe    string // what doctor does to check it
	override string // the Override column, shown when it differs
	// notProbed says why doctor cannot check it; "" when a probe does.
	notProbed string
	// creates: its probes create something, so --production skips them.
	creates bool
}

// topics are the rows of docs/assumptions.md, in its order
// (TestDoctorTopicsMatchAssumptions holds the two together).
var topics = []topic{
	{name: "Base URL", probe: "every request goes to PAYMENTS_BASE_URL; the service must answer there with the envelope", override: "WithBaseURL"},
	{name: "Confirm payment", probe: "confirm the probe payment (sandbox only) with {reference, quote_id}: not 404 or 405; with no payment to confirm, an empty body is refused for its fields", override: "client.Do", creates: true},
	{name: "Quote in the initiate response", probe: "initiate a payment: data.quote with quote_id, amount (the one sent), fee, exchange_rate, total_amount as strings", override: "Payment.RawJSON()", creates: true},
	{name: "Payment statuses", probe: "the status of the initiated and of the confirmed payment, followed to its final status (its payment.completed, failed or rejected event), and of the triggered payment events", override: "compare Payment.Status with your own payments.PaymentStatus", creates: true},
	{name: "Payment fields", probe: "the members of the initiated payment and of the triggered payment events: the specification's fields and the quote", override: "Payment.RawJSON()", creates: true},
	{name: "Required initiate fields", probe: "initiate with an empty body: the field errors name amount, currency, recipient_id and reference", override: "WithBodyField adds a field the SDK does not know", creates: true},
	{name: "Other request fields", probe: "the initiate with the specification's fields only is accepted", override: "WithBodyField(name, value)", creates: true},
	{name: "Rate limit", probe: "the headers of every answer: Retry-After, RateLimit-*, X-RateLimit-*", override: "WithRateLimit(perSecond, burst)"},
	{name: "Error body", probe: "the answers to an invalid body, to a request without the key and to an unknown cursor: the envelope with success false, message, stan, a string code and field errors as a list or a map", override: "—"},
	{name: "Status codes", probe: "create recipient 201; initiate, list events and trigger 200; no key 401", override: "—"},
	{name: "Retryable answers", probe: "what a 429 carries: its wait in Retry-After, or only in headers the client does not read (RateLimit-Reset, X-RateLimit-Reset, ...); against a sandbox, a burst of GET requests to meet one", override: "WithRetries"},
	{name: "Idempotency", probe: "create a recipient and initiate with an Idempotency-Key, then send each again: the same status and body, Idempotent-Replayed: true; the key with another body: 422 idempotency_key_reused", override: "WithIdempotencyKey", creates: true},
	{name: "Identifiers", probe: "the ids of the recipient and payment created are UUIDs; the quote id is a string", override: "—", creates: true},
	{name: "Field bounds", notProbed: "not published; probing each bound would create recipients at the limits", override: "—"},
	{name: "Account numbers", notProbed: "the fake's rule; probing each length would create recipients", override: "—"},
	{name: "Balance and verification", notProbed: "no operation reads a balance, and a failed verification takes the provider's own test accounts", override: "paymentstest.WithBalance, Sandbox.BalanceLowThreshold"},
	{name: "Nigerian accounts", notProbed: "needs a virtual account, which opens a bank account", override: "—"},
	{name: "Error codes", probe: "the codes of the refusals doctor causes are strings among the payments.Code... values", override: "compare APIError.Code with your own payments.ErrorCode"},
	{name: "Test event id", probe: "POST /webhooks/events/trigger/{event name} for each event type answers 200", override: "—", creates: true},
	{name: "Test events", probe: "the resource of each triggered event has a reference starting with test_trigger_", override: "your own check of ev.Data", creates: true},
	{name: "Webhook body", probe: "each triggered event, listed and delivered: {id (a UUID), event, created_at, data}", override: "—", creates: true},
	{name: "Webhook signature", probe: "each delivery of a triggered event carries Payments-Signature: t=...,v1=..., verified with PAYMENTS_WEBHOOK_SECRET", override: "NewStandardVerifier, or a custom Verifier", creates: true},
	{name: "List events", probe: "GET /webhooks/events: data.events and a boolean has_more; after=<unknown id> answers 400 unknown_cursor; the triggered events are listed", override: "client.Do and payments.ParseEvent"},
	{name: "Webhook retries", notProbed: "the service's retry schedule takes minutes to hours to observe", override: "a custom Verifier"},
}

// row is one line of doctor's report; its JSON is the --json schema.
type row struct {
	Topic  string `json:"topic"`
	Result result `json:"result"`
	// Probe is what doctor did to check it.
	Probe string `json:"probe"`
	// Detail is what doctor saw (holds, differs) or why it could not
	// check (could_not_check), with secrets and personal data masked.
	Detail string `json:"detail"`
	// Override is what to use when it differs; "" otherwise.
	Override string `json:"override,omitempty"`
}

// report collects the rows. A difference outranks a hold, which outranks
// "could not check".
type report struct {
	rows  []*row
	index map[string]*row
	more  map[string]int // differences past the third of a row, counted only
	// out, when set, gets each row as text once it is decided (decide).
	out     io.Writer
	decided map[string]bool
	revised []string // decided rows that a later answer changed, printed again at the end
	stopped string   // why doctor stopped probing, for the rows it did not reach
}

func newReport() *report {
	r := &report{index: map[string]*row{}, more: map[string]int{}, decided: map[string]bool{}}
	for _, t := range topics {
		rw := &row{Topic: t.name, Result: unchecked, Probe: t.probe, Detail: t.notProbed}
		if t.notProbed != "" {
			rw.Probe = "none"
		}
		r.rows = append(r.rows, rw)
		r.index[t.name] = rw
	}
	return r
}

func (r *report) get(topic string) *row {
	rw := r.index[topic]
	if rw == nil { // a Topic the contract knows and this table does not
		rw = &row{Topic: topic, Result: unchecked, Probe: "the contract's check"}
		r.rows, r.index[topic] = append(r.rows, rw), rw
	}
	return rw
}

func (r *report) hold(topic, detail string) {
	if rw := r.get(topic); rw.Result == unchecked {
		rw.Result, rw.Detail = holds, detail
		r.changed(topic)
	}
}

func (r *report) differ(topic, seen string) {
	rw := r.get(topic)
	defer r.changed(topic)
	switch {
	case rw.Result != differs:
		rw.Result, rw.Detail = differs, seen
	case strings.Contains(rw.Detail, seen):
	case strings.Count(rw.Detail, "; ") < 2:
		rw.Detail += "; " + seen
	default:
		r.more[topic]++
	}
}

// cannot says why a row could not be checked, unless a probe decided it.
func (r *report) cannot(topic, why string) {
	if rw := r.get(topic); rw.Result == unchecked && rw.Detail == "" {
		rw.Detail = why
		r.changed(topic)
	}
}

// note adds what doctor saw to a row without changing its result; a row
// not yet checked takes it as the reason.
func (r *report) note(topic, text string) {
	switch rw := r.get(topic); {
	case rw.Detail == "":
		rw.Detail = text
	case !strings.Contains(rw.Detail, text):
		rw.Detail += "; " + text
	default:
		return
	}
	r.changed(topic)
}

// changed keeps a decided row to print again, revised, at the end.
func (r *report) changed(topic string) {
	if r.decided[topic] && !slices.Contains(r.revised, topic) {
		r.revised = append(r.revised, topic)
	}
}

// decideUnprobed decides the rows no probe can reach.
func (r *report) decideUnprobed() {
	for _, t := range topics {
		if t.notProbed != "" {
			r.decide(t.name)
		}
	}
}

// decide prints the topics' rows, in the table's order, that are not yet
// printed: no later probe looks at them.
func (r *report) decide(topicNames ...string) {
	for _, t := range topics {
		if slices.Contains(topicNames, t.name) && !r.decided[t.name] {
			r.decided[t.name] = true
			r.print(r.index[t.name], "")
		}
	}
}

// finish decides the remaining rows (stopped says why doctor stopped
// early, or ""), and prints again the decided rows a later answer changed.
// The rows no probe reached say why.
func (r *report) finish(stopped string) {
	r.stopped = stopped
	for _, t := range topics {
		r.decide(t.name)
	}
	for _, rw := range r.rows {
		if !r.decided[rw.Topic] { // a Topic the contract knows and the table does not
			r.decided[rw.Topic] = true
			r.print(rw, "")
		}
	}
	for _, t := range r.revised {
		r.print(r.index[t], " (revised)")
	}
}

// final fills in a row's override and the count of its further
// differences, as printed and in the JSON document.
func (r *report) final(rw *row) {
	if rw.Result == unchecked && rw.Detail == "" {
		rw.Detail = "no probe answered it"
		if r.stopped != "" {
			rw.Detail = "not reached: doctor stopped (" + r.stopped + ")"
		}
	}
	if rw.Result != differs {
		return
	}
	for _, t := range topics {
		if t.name == rw.Topic {
			rw.Override = t.override
		}
	}
	if n := r.more[rw.Topic]; n > 0 && !strings.HasSuffix(rw.Detail, " more like these") {
		rw.Detail += fmt.Sprintf("; and %d more like these", n)
	}
}

// print prints a row as text to out, if set.
func (r *report) print(rw *row, mark string) {
	r.final(rw)
	if r.out == nil {
		return
	}
	word := map[result]string{holds: "holds", differs: "DIFFERS", unchecked: "could not check"}[rw.Result]
	fmt.Fprintf(r.out, "%-15s  %s%s\n", word, rw.Topic, mark)
	fmt.Fprintf(r.out, "%-15s    %s\n", "", rw.Detail)
	if rw.Override != "" && rw.Override != "—" {
		fmt.Fprintf(r.out, "%-15s    override: %s\n", "", rw.Override)
	}
}

func (r *report) count(res result) int {
	n := 0
	for _, rw := range r.rows {
		if rw.Result == res {
			n++
		}
	}
	return n
}

func (r *report) allHold() bool { return r.count(differs) == 0 }

// doctorJSON is the document --json prints.
type doctorJSON struct {
	BaseURL    string `json:"base_url"`
	Production bool   `json:"production"`
	// Writes is true when doctor sent writes: the base URL is a sandbox
	// the merchant named (loopback, or --sandbox-host).
	Writes bool `json:"writes"`
	// AllHold is true when no row differs.
	AllHold bool `json:"all_hold"`
	// Stopped says why doctor stopped probing early; absent when it did
	// not. The exit status is 0 exactly when AllHold and no Stopped.
	Stopped string `json:"stopped,omitempty"`
	Rows    []*row `json:"rows"`
}

func (d *doctor) printJSON(w io.Writer) {
	b, _ := json.MarshalIndent(doctorJSON{BaseURL: d.cfg.baseURL, Production: d.cfg.production, Writes: d.cfg.writes,
		AllHold: d.rep.allHold(), Stopped: d.stopped, Rows: d.rep.rows}, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}

// printHeader prints the line the rows follow, as they are decided.
func (d *doctor) printHeader(w io.Writer) {
	fmt.Fprintf(w, "payments doctor: the SDK's assumptions (docs/assumptions.md) against %s (%s)\n\n", d.cfg.baseURL, d.cfg.why)
}

func (d *doctor) printSummary(w io.Writer) {
	fmt.Fprintf(w, "\n%d hold, %d differ, %d could not be checked.\n", d.rep.count(holds), d.rep.count(differs), d.rep.count(unchecked))
	if d.stopped != "" {
		fmt.Fprintf(w, "doctor stopped early: %s.\n", d.stopped)
	}
}

var (
	bearerText = regexp.MustCompile(`(?i)bearer\s+[^\s"',;]+`)
	jwtText    = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
	digitsText = regexp.MustCompile(`\d{8,}`)
	uuidText   = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// scrub masks, in text the service sent, the API key, the webhook
// secrets, anything shaped like a bearer token or a JWT, and every run of
// eight or more digits but its last four (account numbers, BVNs), leaving
// UUIDs whole, and quotes what would move a terminal's cursor. It is the
// SDK's internal redaction rule, restated: this module may not import the
// SDK's internal packages.
func (d *doctor) scrub(s string) string {
	s = d.scrubSecrets(s)
	ids := uuidText.FindAllString(s, -1)
	s = uuidText.ReplaceAllString(s, "\x00")
	s = digitsText.ReplaceAllStringFunc(s, func(m string) string { return "****" + m[len(m)-4:] })
	for _, id := range ids {
		s = strings.Replace(s, "\x00", id, 1)
	}
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) {
		return strconv.Quote(s)
	}
	return s
}

// scrubSecrets masks the API key, the webhook secrets and anything shaped
// like a bearer token or a JWT, and leaves digits as they are: for values
// that are no one's data, such as a rate limit's reset time.
func (d *doctor) scrubSecrets(s string) string {
	for _, sec := range append([]string{d.cfg.key}, d.cfg.secrets...) {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	s = bearerText.ReplaceAllString(s, "Bearer [redacted]")
	return jwtText.ReplaceAllString(s, "[redacted]")
}

// decodeSegment decodes a base64url JWT segment, with or without padding.
func decodeSegment(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}
