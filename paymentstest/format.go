package paymentstest

import (
	"fmt"
	"log/slog"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// The printed (fmt, every verb, through Format) and logged (log/slog,
// through LogValue) forms of the package's types, as the SDK's own types
// print: a Server as its URL, never its API key or webhook secrets; a
// Webhook with its secrets masked; bodies as their size; signatures masked;
// account numbers by their last four digits; and the API key, the webhook
// secrets, anything shaped like a credential and personal data masked in
// every other text member (internal/redact, which only prints: the fake
// shares no protocol code with the client). encoding/json keeps every value
// whole. Test: TestNoPrintedValueShowsASecret (printed_test.go in the
// payments package).

// Format prints the server, with any verb, as its URL:
// paymentstest.Server(http://127.0.0.1:port).
func (s *Server) Format(f fmt.State, _ rune) { fmt.Fprintf(f, "paymentstest.Server(%s)", s.url) }

// LogValue logs the server as Format prints it.
func (s *Server) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(s)) }

// Format prints the webhook's settings, with any verb, its secrets masked.
func (w Webhook) Format(f fmt.State, _ rune) { redact.FormatFields(f, w, w.Secrets...) }

// LogValue logs the webhook's settings, its secrets masked.
func (w Webhook) LogValue() slog.Value { return redact.LogFields(w, w.Secrets...) }

// Format prints the settings, with any verb, masked.
func (s Sandbox) Format(f fmt.State, _ rune) { redact.FormatFields(f, s) }

// LogValue logs the settings, masked.
func (s Sandbox) LogValue() slog.Value { return redact.LogFields(s) }

// Format prints the fault, with any verb, masked.
func (ft Fault) Format(f fmt.State, _ rune) { redact.FormatFields(f, ft) }

// LogValue logs the fault, masked.
func (ft Fault) LogValue() slog.Value { return redact.LogFields(ft) }

// Format prints the record, with any verb, masked.
func (r RequestRecord) Format(f fmt.State, _ rune) { redact.FormatFields(f, r) }

// LogValue logs the record, masked.
func (r RequestRecord) LogValue() slog.Value { return redact.LogFields(r) }

// sized stands for a body in a printed value: its size, never its content
// (the resource in clear).
func sized(b []byte) []byte {
	if b == nil {
		return nil
	}
	return fmt.Appendf(nil, "[%d bytes]", len(b))
}

// printed is the event as printed: its data and body as their sizes.
func (e Event) printed() Event {
	e.Data, e.Body = sized(e.Data), sized(e.Body)
	return e
}

// Format prints the event, with any verb, its data and body as their sizes.
func (e Event) Format(f fmt.State, _ rune) { redact.FormatFields(f, e.printed()) }

// LogValue logs the event, its data and body as their sizes.
func (e Event) LogValue() slog.Value { return redact.LogFields(e.printed()) }

// Format prints the delivery, with any verb, its body as its size.
func (d Delivery) Format(f fmt.State, _ rune) {
	d.Body = sized(d.Body)
	redact.FormatFields(f, d)
}

// LogValue logs the delivery, its body as its size.
func (d Delivery) LogValue() slog.Value {
	d.Body = sized(d.Body)
	return redact.LogFields(d)
}

// Format prints the attempt, with any verb, its signature masked.
func (a DeliveryAttempt) Format(f fmt.State, _ rune) {
	a.Signature = redact.Mask(a.Signature)
	redact.FormatFields(f, a)
}

// LogValue logs the attempt, its signature masked.
func (a DeliveryAttempt) LogValue() slog.Value {
	a.Signature = redact.Mask(a.Signature)
	return redact.LogFields(a)
}

// printed is the payment as printed: the account numbers by their last
// four characters.
func (p IncomingPayment) printed() IncomingPayment {
	p.AccountNumber, p.PayerAccount = redact.LastFour(p.AccountNumber), redact.LastFour(p.PayerAccount)
	return p
}

// Format prints the payment, with any verb, its account numbers masked.
func (p IncomingPayment) Format(f fmt.State, _ rune) { redact.FormatFields(f, p.printed()) }

// LogValue logs the payment, its account numbers masked.
func (p IncomingPayment) LogValue() slog.Value { return redact.LogFields(p.printed()) }
