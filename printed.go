package payments

import (
	"fmt"
	"log/slog"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// The printed (fmt, every verb, through Format) and logged (log/slog,
// through LogValue) forms of the types that hold no personal data of their
// own (personal.go has those) but text from outside: what the service sent
// (a stan, a message, an id, a header), which may echo the API key, a
// webhook secret or personal data. Each masks, in its text, the API key of
// the Client that received it (the Response and the resources know it), and
// anything shaped like a credential or personal data (internal/redact);
// amounts, numbers and times print whole. encoding/json and encoding/gob
// keep every value whole. Test: TestNoPrintedValueShowsASecret
// (printed_test.go).

// Format prints the response's fields, with any verb, and the size of its
// body, never the body itself (it holds the resource in clear). A header
// that carries credentials by its name (Authorization, Cookie, anything
// naming a key, a secret, a token or a signature) prints masked, and so does
// the Client's API key, anything shaped like a credential and
// account-number-like digits in every other header and in the stan and
// message: a service or a proxy that echoes them cannot put them in a log.
func (r Response) Format(f fmt.State, _ rune) {
	sec := r.masks.list()
	fmt.Fprintf(f, "{StatusCode:%d Header:%v Stan:%s Message:%s IdempotencyKey:%s Attempts:%d Replayed:%t Body:[%d bytes]}",
		r.StatusCode, redact.Header(r.Header, sec...), redact.String(r.Stan, nil, sec...),
		redact.String(r.Message, nil, sec...), redact.String(r.IdempotencyKey, nil, sec...), r.Attempts, r.Replayed, len(r.Body))
}

// LogValue logs the response's fields, masked as Format masks them, and the
// size of its body, never the body itself.
func (r Response) LogValue() slog.Value {
	sec := r.masks.list()
	return redact.Value(slog.GroupValue(slog.Int("status_code", r.StatusCode),
		slog.Any("header", redact.Header(r.Header, sec...)), slog.String("stan", r.Stan),
		slog.String("message", r.Message), slog.String("idempotency_key", r.IdempotencyKey),
		slog.Int("attempts", r.Attempts), slog.Bool("replayed", r.Replayed), slog.Int("body_bytes", len(r.Body))), sec...)
}

// masker holds what a value that came from a Client masks when printed:
// its API key. The key is behind a function, so that no printer that walks
// a value's fields by reflection (go-spew, a test's failure diff) can reach
// it, and a pointer, shared by every value of one Client, so that two values
// of one Client stay reflect.DeepEqual.
type masker struct {
	secrets func() []string
}

// list returns the values to mask (none for nil).
func (m *masker) list() []string {
	if m == nil {
		return nil
	}
	return m.secrets()
}

// secrets are the values to mask in the printed form of the resource: the
// API key of the Client that received it.
func (r *APIResource) secrets() []string {
	if resp := r.LastResponse(); resp != nil {
		return resp.masks.list()
	}
	return nil
}

// Format prints the error's text (Error), with any verb, %#v included, by
// pointer or by value: never its Body, which is the service's answer in
// clear, nor its Header.
func (e APIError) Format(f fmt.State, _ rune) { redact.Formatted(f, e.Error()) }

// LogValue logs the error's text (Error), never its Body or Header: slog's
// JSON handler would otherwise log an APIError value as its JSON, body and
// headers whole.
func (e APIError) LogValue() slog.Value { return slog.StringValue(redact.String(e.Error(), nil)) }

// Format prints the error's text (Error), with any verb, never its
// Response's body or headers.
func (e MalformedResponseError) Format(f fmt.State, _ rune) {
	redact.Formatted(f, e.Error(), e.secrets()...)
}

// LogValue logs the error's text (Error), never its Response's body or
// headers.
func (e MalformedResponseError) LogValue() slog.Value {
	return slog.StringValue(redact.String(e.Error(), nil, e.secrets()...))
}

func (e *MalformedResponseError) secrets() []string {
	if e.Response == nil {
		return nil
	}
	return e.Response.masks.list()
}

// Format prints the error's text (Error), with any verb.
func (e TransportError) Format(f fmt.State, _ rune) { redact.Formatted(f, e.Error()) }

// LogValue logs the error's text (Error).
func (e TransportError) LogValue() slog.Value { return slog.StringValue(redact.String(e.Error(), nil)) }

// Format prints the payment's fields, with any verb, with the API key of
// the Client that received it, anything shaped like a credential and
// account-number-like digits in its text masked; amounts print whole. Never
// the SDK's internals (APIResource).
func (p Payment) Format(f fmt.State, _ rune) { redact.FormatFields(f, p, p.secrets()...) }

// LogValue logs the payment's fields, masked as Format masks them.
func (p Payment) LogValue() slog.Value { return redact.LogFields(p, p.secrets()...) }

// Format prints the quote's fields, with any verb, its amounts whole.
func (q Quote) Format(f fmt.State, _ rune) { redact.FormatFields(f, q, q.masks.list()...) }

// LogValue logs the quote's fields, its amounts whole.
func (q Quote) LogValue() slog.Value { return redact.LogFields(q, q.masks.list()...) }

// Format prints the page's events as Event prints them and HasMore, with
// any verb, with the API key of the Client that received it masked.
func (p EventPage) Format(f fmt.State, _ rune) { redact.FormatFields(f, p, p.secrets()...) }

// LogValue logs the client as Format prints it: its base URL, never its
// API key.
func (c *Client) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(c)) }

// Format prints the error's text (Error), with any verb.
func (e ValidationError) Format(f fmt.State, _ rune) { redact.Formatted(f, e.Error()) }

// LogValue logs the error's text (Error).
func (e ValidationError) LogValue() slog.Value {
	return slog.StringValue(redact.String(e.Error(), nil))
}

// Format prints the field's name and problem, with any verb, masked.
func (e FieldError) Format(f fmt.State, _ rune) { redact.FormatFields(f, e) }

// LogValue logs the field's name and problem, masked.
func (e FieldError) LogValue() slog.Value { return redact.LogFields(e) }

// Format prints the operation's fields, with any verb.
func (o Operation) Format(f fmt.State, _ rune) { redact.FormatFields(f, o) }

// LogValue logs the operation's fields.
func (o Operation) LogValue() slog.Value { return redact.LogFields(o) }

// Format prints the attempt's fields, with any verb.
func (a Attempt) Format(f fmt.State, _ rune) { redact.FormatFields(f, a) }

// LogValue logs the attempt's fields.
func (a Attempt) LogValue() slog.Value { return redact.LogFields(a) }

// Format prints the result's fields, with any verb, masked: its error as
// the error prints itself, the stan and the surprises with anything shaped
// like a credential masked.
func (r OperationResult) Format(f fmt.State, _ rune) { redact.FormatFields(f, r) }

// LogValue logs the result's fields, masked as Format masks them.
func (r OperationResult) LogValue() slog.Value { return redact.LogFields(r) }

// Format prints the surprise's kind and detail, with any verb.
func (s Surprise) Format(f fmt.State, _ rune) { redact.FormatFields(f, s) }

// LogValue logs the surprise's kind and detail.
func (s Surprise) LogValue() slog.Value { return redact.LogFields(s) }

// Format prints the params' fields, with any verb, masked.
func (p EventListParams) Format(f fmt.State, _ rune) { redact.FormatFields(f, p) }

// LogValue logs the params' fields, masked.
func (p EventListParams) LogValue() slog.Value { return redact.LogFields(p) }

// Format prints the params' fields, with any verb, masked.
func (p PaymentConfirmParams) Format(f fmt.State, _ rune) { redact.FormatFields(f, p) }

// LogValue logs the params' fields, masked.
func (p PaymentConfirmParams) LogValue() slog.Value { return redact.LogFields(p) }

// Format prints the params' fields, with any verb, masked; the amount
// whole.
func (p PaymentInitiateParams) Format(f fmt.State, _ rune) { redact.FormatFields(f, p) }

// LogValue logs the params' fields, masked; the amount whole.
func (p PaymentInitiateParams) LogValue() slog.Value { return redact.LogFields(p) }

// Format prints the metadata's fields, with any verb, masked.
func (m VirtualAccountMetadata) Format(f fmt.State, _ rune) { redact.FormatFields(f, m) }

// LogValue logs the metadata's fields, masked.
func (m VirtualAccountMetadata) LogValue() slog.Value { return redact.LogFields(m) }
