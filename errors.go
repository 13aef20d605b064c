package payments

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/paymentsapi/payments-go/internal/redact"
	"github.com/paymentsapi/payments-go/internal/retry"
)

// Sentinel errors. An *APIError matches the sentinel of its HTTP status with
// errors.Is, so callers can branch without type assertions:
//
//	if errors.Is(err, payments.ErrNotFound) { ... }
var (
	ErrUnauthorized  = errors.New("payments: unauthorized (401)")
	ErrForbidden     = errors.New("payments: forbidden (403)")
	ErrNotFound      = errors.New("payments: not found (404)")
	ErrConflict      = errors.New("payments: conflict (409)")
	ErrUnprocessable = errors.New("payments: unprocessable (422)")
	ErrRateLimited   = errors.New("payments: rate limited (429)")

	// ErrMalformedResponse matches a *MalformedResponseError.
	ErrMalformedResponse = errors.New("payments: malformed response")

	// ErrInvalidParams matches a *ValidationError.
	ErrInvalidParams = errors.New("payments: invalid parameters")

	// ErrInvalidConfig matches every error NewClient returns for bad options.
	ErrInvalidConfig = errors.New("payments: invalid configuration")
)

var statusSentinels = map[int]error{
	http.StatusUnauthorized:        ErrUnauthorized,
	http.StatusForbidden:           ErrForbidden,
	http.StatusNotFound:            ErrNotFound,
	http.StatusConflict:            ErrConflict,
	http.StatusUnprocessableEntity: ErrUnprocessable,
	http.StatusTooManyRequests:     ErrRateLimited,
}

// FieldError is one problem with one field, reported by the SDK's own
// validation or by the service.
type FieldError struct {
	// Field is the JSON name of the field, with a dotted path for nested
	// fields (for example "identification.identification_image").
	Field string `json:"field"`
	// Message says what is wrong. It never repeats the field's value.
	Message string `json:"message"`
}

// APIError is an answer from the service that is not a success: a non-2xx
// status, or a 2xx whose envelope says success is false.
type APIError struct {
	// StatusCode is the HTTP status of the final attempt.
	StatusCode int
	// Message is the service's message, with anything that looks like a
	// secret or an account number masked. When the body is not the JSON
	// envelope (an HTML page from a proxy, text, nothing), it says what was
	// received instead; Body has the body itself.
	Message string
	// Stan is the service's identifier of the operation; quote it to support.
	Stan string
	// Code is the service's machine-readable error code, when it sent one:
	// compare it with the Code constants, or match it with
	// errors.Is(err, payments.CodeQuoteExpired).
	Code ErrorCode
	// Errors are the field problems the service reported.
	Errors []FieldError
	// Body is the response body as received, capped at 16 KiB.
	Body []byte
	// Header holds the response headers of the final attempt.
	Header http.Header
	// IdempotencyKey is the key the call sent ("" if none). Retrying with
	// WithIdempotencyKey(IdempotencyKey) cannot perform the operation twice.
	IdempotencyKey string
	// Attempts is the number of HTTP attempts made.
	Attempts int
	// Err is why the body could not be read in full (the context's
	// deadline, a dropped connection), or nil. Unwrap returns it, so
	// errors.Is(err, context.DeadlineExceeded) holds for an answer cut short
	// by the deadline.
	Err error
	// BudgetExhausted is true when the call stopped although it would have
	// been retried, because its Client's retry budget was empty (see
	// RetryBudget); errors.Is(err, ErrRetryBudgetExhausted) reports it.
	BudgetExhausted bool
	// Replayed is true when the service said (header Idempotent-Replayed:
	// true) that this answer is the one it stored for IdempotencyKey: the
	// same key with the same body gets the first answer again, refusals
	// included. A cause fixed since (the account funded, the recipient
	// verified) needs a call with a new idempotency key.
	Replayed bool
}

// Error describes the failure: status, the service's (masked) message and
// field problems, code, stan, idempotency key and attempts, and whether the
// answer was a replay.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "payments: HTTP %d", e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteString(" " + t)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	for _, f := range e.Errors {
		fmt.Fprintf(&b, "; %s: %s", f.Field, f.Message)
	}
	writeDetails(&b, "code", string(e.Code), "stan", e.Stan, "idempotency_key", e.IdempotencyKey)
	fmt.Fprintf(&b, " after %d attempt(s)", e.Attempts)
	if e.Replayed {
		b.WriteString(replayedText)
	}
	if e.BudgetExhausted {
		b.WriteString(budgetExhaustedText)
	}
	return b.String()
}

// replayedText ends the text of an error whose answer the service replayed
// for its idempotency key.
const replayedText = "; a replayed answer (the first one to this idempotency key): a cause fixed since needs a new key"

// budgetExhaustedText ends the text of an error whose call the retry budget
// stopped.
const budgetExhaustedText = "; not retried: the client's retry budget is exhausted"

// Unwrap returns what errors.Is and errors.As match an APIError against:
// Err, its Code (errors.Is(err, payments.CodeQuoteExpired)), its status's
// sentinel (ErrNotFound, ErrRateLimited, ...), and ErrRetryBudgetExhausted
// when BudgetExhausted is set.
func (e *APIError) Unwrap() []error {
	errs := make([]error, 0, 4)
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	if e.Code != "" {
		errs = append(errs, e.Code)
	}
	if s, ok := statusSentinels[e.StatusCode]; ok {
		errs = append(errs, s)
	}
	if e.BudgetExhausted {
		errs = append(errs, ErrRetryBudgetExhausted)
	}
	return errs
}

// Temporary reports whether the same call may succeed later: exactly the
// statuses the SDK retries (408, 409, 429, 500, 502, 503, 504), decided in
// one place for both.
func (e *APIError) Temporary() bool { return retry.RetryableStatus(e.StatusCode) }

// ValidationError lists every invalid field of a call's params. Nothing was
// sent. It matches ErrInvalidParams.
type ValidationError struct {
	Fields []FieldError
}

// Error lists every invalid field with what is wrong with it. It never
// repeats a field's value.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("payments: invalid parameters: ")
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field + ": " + f.Message)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalidParams) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidParams }

// Has reports whether field is among the invalid fields.
func (e *ValidationError) Has(field string) bool {
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// TransportError is a call that got no usable HTTP response: the connection
// failed or timed out, or the context ended, on the last attempt. Unwrap gives
// the cause, so errors.Is(err, context.DeadlineExceeded) works. The request
// may have reached the service, so its outcome is unknown: retry with the same
// IdempotencyKey to learn it (the service replays the first answer). The
// cause's text is masked like the service's messages.
type TransportError struct {
	Method string
	// Path is the request path, without host or query.
	Path           string
	IdempotencyKey string
	// Attempts is the number of HTTP attempts made: 0 when the context
	// ended while the first one waited (WithRateLimit).
	Attempts int
	Err      error
	// BudgetExhausted is true when the call stopped although it would have
	// been retried, because its Client's retry budget was empty;
	// errors.Is(err, ErrRetryBudgetExhausted) reports it.
	BudgetExhausted bool
}

// Error names the request, the cause, the idempotency key and the attempts,
// and, when the call carried a key, that its outcome is unknown and how to
// learn it.
func (e *TransportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "payments: %s %s: %v", e.Method, redact.Secrets(e.Path), e.Err)
	writeDetails(&b, "idempotency_key", e.IdempotencyKey)
	fmt.Fprintf(&b, " after %d attempt(s)", e.Attempts)
	if e.BudgetExhausted {
		b.WriteString(budgetExhaustedText)
	}
	switch {
	case e.Attempts == 0:
		b.WriteString("; nothing was sent")
	case e.IdempotencyKey != "":
		b.WriteString("; the outcome is unknown: retry with the same idempotency key to learn it")
	}
	return b.String()
}

// Unwrap returns the cause, and ErrRetryBudgetExhausted when
// BudgetExhausted is set, for errors.Is and errors.As.
func (e *TransportError) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	if e.BudgetExhausted {
		errs = append(errs, ErrRetryBudgetExhausted)
	}
	return errs
}

// MalformedResponseError is a response the SDK cannot use: a 2xx with no
// data, a body that is not the JSON envelope (an HTML page from a proxy, an
// empty or truncated body), or one over the size cap. The operation may have
// taken effect and its outcome is unknown: Response keeps what was received,
// and retrying with WithIdempotencyKey(IdempotencyKey) is safe and returns
// the outcome. It matches ErrMalformedResponse.
type MalformedResponseError struct {
	// Reason says what was wrong, with any text the service sent masked.
	Reason string
	// Response is what was received, with Body holding the body (capped,
	// not masked).
	Response *Response
	// Err is the decoding error, if any. When its text quoted a secret the
	// service echoed, it is replaced by an error with that text masked.
	Err error
}

// newMalformed masks, at construction, whatever the service sent that the
// error's text repeats: no error value holds the key.
func newMalformed(reason string, r *Response, err error, secret string) *MalformedResponseError {
	return newMalformedKeep(reason, nil, r, err, secret)
}

// newMalformedKeep is newMalformed leaving the values of keep whole in the
// reason: the amounts it names, which are never masked.
func newMalformedKeep(reason string, keep []string, r *Response, err error, secret string) *MalformedResponseError {
	return &MalformedResponseError{Reason: redact.String(reason, keep, secret), Response: r, Err: redact.Err(err, secret)}
}

// Error says what was wrong with the response, with its status, stan and
// idempotency key, and that the outcome is unknown.
func (e *MalformedResponseError) Error() string {
	what := e.Reason
	if e.Err != nil {
		what += ": " + e.Err.Error()
	}
	var b strings.Builder
	b.WriteString("payments: malformed response: " + what)
	if r := e.Response; r != nil {
		fmt.Fprintf(&b, " (HTTP %d", r.StatusCode)
		for _, kv := range [][2]string{{"stan", r.Stan}, {"idempotency_key", r.IdempotencyKey}} {
			if kv[1] != "" {
				b.WriteString(", " + kv[0] + "=" + redact.Secrets(kv[1]))
			}
		}
		b.WriteString(")")
		if r.IdempotencyKey != "" {
			b.WriteString("; the outcome is unknown: retry with the same idempotency key to learn it")
		}
	}
	return b.String()
}

// Unwrap returns ErrMalformedResponse and the decoding error, if any, for
// errors.Is and errors.As.
func (e *MalformedResponseError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrMalformedResponse}
	}
	return []error{ErrMalformedResponse, e.Err}
}

// IdempotencyKeyOf returns the idempotency key carried by an error of this
// package, so that the failed call can be retried later with
// WithIdempotencyKey without risk of doing it twice.
func IdempotencyKeyOf(err error) (string, bool) {
	var (
		apiErr  *APIError
		tErr    *TransportError
		malfErr *MalformedResponseError
	)
	switch {
	case errors.As(err, &apiErr):
		return apiErr.IdempotencyKey, apiErr.IdempotencyKey != ""
	case errors.As(err, &tErr):
		return tErr.IdempotencyKey, tErr.IdempotencyKey != ""
	case errors.As(err, &malfErr) && malfErr.Response != nil:
		return malfErr.Response.IdempotencyKey, malfErr.Response.IdempotencyKey != ""
	}
	return "", false
}

// writeDetails appends " (k=v, ...)" for the non-empty values of kv pairs.
func writeDetails(b *strings.Builder, kv ...string) {
	first := true
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if first {
			b.WriteString(" (")
			first = false
		} else {
			b.WriteString(", ")
		}
		b.WriteString(kv[i] + "=" + kv[i+1])
	}
	if !first {
		b.WriteString(")")
	}
}

// ErrRetryBudgetExhausted matches the error of a call that would have been
// retried but was not, because its Client's retry budget was empty (see
// RetryBudget): errors.Is(err, payments.ErrRetryBudgetExhausted). The error
// is still the *APIError or *TransportError of the last attempt, with its
// idempotency key: the outcome rules are those of any failed call.
var ErrRetryBudgetExhausted = errors.New("payments: retry budget exhausted")

// ErrorCode is a machine-readable error code of the service, as APIError.Code
// carries it. The specification publishes no list: the constants below are
// the codes the SDK assumes and paymentstest sends (see the README's
// Assumptions), each with what to do; any other code passes through as
// received. An ErrorCode is also an error, so that errors.Is(err, code)
// matches an *APIError that carries it.
type ErrorCode string

// Error codes and what to do about each.
const (
	// CodeValidationFailed: APIError.Errors lists the bad fields; fix the
	// input. Nothing was done.
	CodeValidationFailed ErrorCode = "validation_failed"
	// CodeQuoteExpired: the service refused a Confirm because the quote's
	// five minutes ran out. Nothing was paid: initiate again with a NEW
	// initiate key (the reference is free again: the same one is accepted)
	// and confirm the new quote with a NEW confirm key; the old keys replay
	// the old answers. See docs/retries.md, "After a refusal".
	CodeQuoteExpired ErrorCode = "quote_expired"
	// CodeQuoteAlreadyConfirmed: this quote was confirmed before, by a call
	// with another idempotency key. The payment may be done: look it up by
	// reference (webhooks, dashboard) and never initiate it again.
	CodeQuoteAlreadyConfirmed ErrorCode = "quote_already_confirmed"
	// CodeDuplicateReference: a payment with this reference exists. It is
	// the same order: find that payment rather than pay again.
	CodeDuplicateReference ErrorCode = "duplicate_reference"
	// CodeIdempotencyKeyReused: the key was used before with a different
	// body. A bug in the caller: give each operation its own key.
	CodeIdempotencyKeyReused ErrorCode = "idempotency_key_reused"
	// CodeIdempotencyInProgress (409): the first call with this key is still
	// running. Retry the same call later; the SDK already retries it.
	CodeIdempotencyInProgress ErrorCode = "idempotency_in_progress"
	// CodeInvalidIdempotencyKey: the key is not acceptable (the SDK checks
	// length and characters before sending).
	CodeInvalidIdempotencyKey ErrorCode = "invalid_idempotency_key"
	// CodeUnauthorized (401): the API key is wrong, revoked, or belongs to
	// another environment than the base URL.
	CodeUnauthorized ErrorCode = "unauthorized"
	// CodeNotFound (404): no such resource for this merchant; check the id.
	CodeNotFound ErrorCode = "not_found"
	// CodeWebhookNotConfigured: Trigger needs a webhook URL set for the
	// account (the dashboard, or the sandbox's -webhook-url).
	CodeWebhookNotConfigured ErrorCode = "webhook_not_configured"
	// CodeInvalidJSON: the service could not parse the body. With the typed
	// methods a bug: report it with the stan. With Client.Do, check params.
	CodeInvalidJSON ErrorCode = "invalid_json"
	// CodeMethodNotAllowed, CodeUnsupportedMediaType and
	// CodePayloadTooLarge: a Client.Do call the service does not take.
	CodeMethodNotAllowed     ErrorCode = "method_not_allowed"
	CodeUnsupportedMediaType ErrorCode = "unsupported_media_type"
	CodePayloadTooLarge      ErrorCode = "payload_too_large"
	// CodeInternal (500) and CodeShuttingDown (503): the service failed;
	// the SDK retries, and a later retry with the same key is safe.
	CodeInternal     ErrorCode = "internal_error"
	CodeShuttingDown ErrorCode = "shutting_down"
	// CodeInsufficientBalance: Confirm was refused because the merchant's
	// balance in the payment's currency cannot cover the quote's total.
	// Nothing was paid. Fund the account (the sandbox:
	// paymentstest.WithBalance), then confirm the same quote again with a
	// NEW confirm key before the quote expires: the same key replays this
	// refusal (APIError.Replayed). Keep the initiate key: the live quote owns
	// the reference, so a new initiate key gets CodeDuplicateReference. See
	// docs/retries.md, "After a refusal".
	CodeInsufficientBalance ErrorCode = "insufficient_balance"
	// CodeRecipientVerificationFailed: Initiate was refused because the
	// recipient failed verification (recipient.verification_failed). Update
	// its account number, which verifies it again, or pay someone else;
	// either way initiate with a new idempotency key.
	CodeRecipientVerificationFailed ErrorCode = "recipient_verification_failed"
	// CodeRecipientNotVerified: Initiate was refused because the
	// recipient's verification is not finished. Initiate again once
	// recipient.verified has arrived, with a NEW idempotency key: the same
	// key replays this refusal (APIError.Replayed).
	CodeRecipientNotVerified ErrorCode = "recipient_not_verified"
)

// Error returns the code itself, so that an ErrorCode prints as the code and
// serves as the target of errors.Is.
func (c ErrorCode) Error() string { return string(c) }
