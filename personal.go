package payments

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// Personal data (account numbers, BVNs, identification numbers and images,
// email addresses, mobile numbers) is masked where it becomes text that is
// printed or logged, and nowhere else: fmt (every verb, through Format),
// String, log/slog (LogValue) and error strings. encoding/json and
// encoding/gob keep every value whole, so that a resource or params stored,
// cached or queued come back as they were, and a request carries what it
// must. This file holds the printed and logged forms of every type that
// holds personal data. Tests: TestEveryTypeRoundTrips and
// TestPersonalDataIsMaskedInText (personal_test.go).

// AccountNumber is a bank account number. It is personal data: printed (fmt,
// every verb; String) or logged (log/slog, text or JSON) it shows only its
// last four characters ("****6789"), so that two accounts can be told
// apart. encoding/json and encoding/gob keep it whole. Convert it,
// string(n), where you need the number itself, such as a virtual account's
// number to show your customer.
type AccountNumber string

// String returns the number's last four characters, "****6789".
func (n AccountNumber) String() string { return redact.LastFour(string(n)) }

// Format prints the number's last four characters, "****6789".
func (n AccountNumber) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, n.String()) }

// LogValue logs the number's last four characters, "****6789".
func (n AccountNumber) LogValue() slog.Value { return slog.StringValue(n.String()) }

// PersonalData is a value that identifies a person: a BVN, an identification
// number or image, an email address, a mobile number. Printed (fmt, every
// verb; String) or logged (log/slog, text or JSON) it shows as "[redacted]"
// ("" when empty). encoding/json and encoding/gob keep it whole. Convert it,
// string(v), where you need the value.
type PersonalData string

// String returns "[redacted]", or "" for an empty value.
func (v PersonalData) String() string { return redact.Mask(string(v)) }

// Format prints "[redacted]", or nothing for an empty value.
func (v PersonalData) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, v.String()) }

// LogValue logs "[redacted]", or "" for an empty value.
func (v PersonalData) LogValue() slog.Value { return slog.StringValue(v.String()) }

// Format prints the recipient's fields, with any verb, with its personal
// data masked (the account number keeps its last four digits), and never
// the SDK's internals (APIResource).
func (r Recipient) Format(f fmt.State, _ rune) { redact.FormatFields(f, r, r.secrets()...) }

// LogValue logs the recipient's fields with its personal data masked.
// (slog's JSON handler would otherwise log the JSON encoding, which keeps
// it whole.)
func (r Recipient) LogValue() slog.Value { return redact.LogFields(r, r.secrets()...) }

// Format prints the document's type, its number and image masked.
func (i Identification) Format(f fmt.State, _ rune) { redact.FormatFields(f, i) }

// LogValue logs the document's type, its number and image masked.
func (i Identification) LogValue() slog.Value { return redact.LogFields(i) }

// Format prints the details with the account number masked.
func (d PaymentDetails) Format(f fmt.State, _ rune) { redact.FormatFields(f, d) }

// LogValue logs the details with the account number masked.
func (d PaymentDetails) LogValue() slog.Value { return redact.LogFields(d) }

// Format prints the params' fields, with any verb, with their personal data
// masked. (A pointer field printed by fmt with a verb such as %s would show
// its target's raw fields: the params print themselves.)
func (p RecipientCreateParams) Format(f fmt.State, _ rune) { redact.FormatFields(f, p) }

// LogValue logs the params' fields with their personal data masked.
func (p RecipientCreateParams) LogValue() slog.Value { return redact.LogFields(p) }

// Format prints the params' fields, with any verb, with their personal data
// masked.
func (p RecipientUpdateParams) Format(f fmt.State, _ rune) { redact.FormatFields(f, p) }

// LogValue logs the params' fields with their personal data masked.
func (p RecipientUpdateParams) LogValue() slog.Value { return redact.LogFields(p) }

// Format prints the account's fields, with any verb, its number masked.
func (va VirtualAccount) Format(f fmt.State, _ rune) { redact.FormatFields(f, va, va.secrets()...) }

// LogValue logs the account's fields, its number masked.
func (va VirtualAccount) LogValue() slog.Value { return redact.LogFields(va, va.secrets()...) }

// Format prints the params' fields, with any verb, with the BVN, the email
// and the mobile number masked.
func (p VirtualAccountCreateParams) Format(f fmt.State, _ rune) { redact.FormatFields(f, p) }

// LogValue logs the params' fields with the BVN, the email and the mobile
// number masked.
func (p VirtualAccountCreateParams) LogValue() slog.Value { return redact.LogFields(p) }

// Format prints the payer with the account number masked.
func (p Payer) Format(f fmt.State, _ rune) { redact.FormatFields(f, p) }

// LogValue logs the payer with the account number masked.
func (p Payer) LogValue() slog.Value { return redact.LogFields(p) }

// masked is the payment as printed: a narration may quote an account number.
func (v VirtualAccountPayment) masked() VirtualAccountPayment {
	v.Description = redact.String(v.Description, nil)
	return v
}

// Format prints the payment's fields, with any verb, with account numbers
// and the narration's account-number-like digits masked.
func (v VirtualAccountPayment) Format(f fmt.State, _ rune) {
	redact.FormatFields(f, v.masked(), v.secrets()...)
}

// LogValue logs the payment with account numbers and the narration's
// account-number-like digits masked.
func (v VirtualAccountPayment) LogValue() slog.Value {
	return redact.LogFields(v.masked(), v.secrets()...)
}

// eventSummary is an event as logged: never its data.
type eventSummary struct {
	ID        string    `json:"id"`
	Type      EventType `json:"event"`
	CreatedAt time.Time `json:"created_at"`
}

// LogValue logs the event's id, kind and creation time: never its data,
// which may hold personal data (encoding/json, which slog's JSON handler
// would use, keeps it).
func (e Event) LogValue() slog.Value {
	return redact.Value(slog.GroupValue(slog.String("id", e.ID), slog.String("event", string(e.Type)),
		slog.Time("created_at", e.CreatedAt)))
}

// LogValue logs the page's events as Event logs them (without their data)
// and HasMore.
func (p EventPage) LogValue() slog.Value {
	events := make([]eventSummary, len(p.Events))
	for i, e := range p.Events {
		if e != nil {
			events[i] = eventSummary{redact.String(e.ID, nil, p.secrets()...), EventType(redact.String(string(e.Type), nil, p.secrets()...)), e.CreatedAt}
		}
	}
	return slog.GroupValue(slog.Any("events", events), slog.Bool("has_more", p.HasMore))
}
