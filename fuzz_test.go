package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
)

// Fuzz targets for everything the SDK decodes from the network, and for the
// amounts it encodes. Their seed corpora live in testdata/fuzz/<target>; a
// plain `go test` runs every seed, and .ci/fuzz runs each target for a few
// seconds. The webhook targets are in webhooks_fuzz_test.go.

// fzAnswer is an in-memory transport that answers every request with one
// fixed response, and remembers the last request body.
type fzAnswer struct {
	status int
	header http.Header
	body   []byte
	calls  int
	sent   []byte
}

func (a *fzAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	a.calls++
	a.sent = nil
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		a.sent = b
	}
	return &http.Response{
		Status:        http.StatusText(a.status),
		StatusCode:    a.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        a.header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(a.body)),
		ContentLength: int64(len(a.body)),
		Request:       req,
	}, nil
}

// fzClient returns a client whose only transport is a, without retries, so
// that one call is one decoding of a's answer.
func fzClient(t *testing.T, a *fzAnswer) *payments.Client {
	c, err := payments.NewClient(harnessKey,
		payments.WithBaseURL(harnessBase),
		payments.WithMaxRetries(0),
		payments.WithHTTPClient(&http.Client{
			Transport:     a,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fzStatus maps any fuzzed number onto an HTTP status from lo to hi, keeping
// the statuses in that range as they are.
func fzStatus(n uint16, lo, hi int) int {
	if int(n) >= lo && int(n) <= hi {
		return int(n)
	}
	return lo + int(n)%(hi-lo+1)
}

func fzAnswerFor(status int, contentType string, body []byte) *fzAnswer {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return &fzAnswer{status: status, header: h, body: body}
}

// fzOperation is one typed operation of the SDK, called with valid params;
// it returns the response metadata of a success.
type fzOperation struct {
	name       string
	idempotent bool // sends an Idempotency-Key of its own
	call       func(c *payments.Client) (*payments.Response, error)
}

var fzOperations = []fzOperation{
	{"Recipients.Create", true, func(c *payments.Client) (*payments.Response, error) {
		r, err := c.Recipients.Create(context.Background(), validRecipientParams())
		if err != nil {
			return nil, err
		}
		return r.LastResponse(), nil
	}},
	{"Recipients.Update", false, func(c *payments.Client) (*payments.Response, error) {
		r, err := c.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{AccountName: "Ada"})
		if err != nil {
			return nil, err
		}
		return r.LastResponse(), nil
	}},
	{"Payments.Initiate", true, func(c *payments.Client) (*payments.Response, error) {
		p, err := c.Payments.Initiate(context.Background(), validInitiateParams())
		if err != nil {
			return nil, err
		}
		if p.Quote == nil || p.Quote.ID == "" || p.Quote.ExpiresAt.IsZero() {
			return nil, errors.New("Initiate succeeded without a quote id and an expiry")
		}
		return p.LastResponse(), nil
	}},
	{"Payments.Confirm", true, func(c *payments.Client) (*payments.Response, error) {
		p, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "order-1", QuoteID: quoteUUID})
		if err != nil {
			return nil, err
		}
		return p.LastResponse(), nil
	}},
	{"VirtualAccounts.Create", false, func(c *payments.Client) (*payments.Response, error) {
		va, err := c.VirtualAccounts.Create(context.Background(), validVirtualAccountParams())
		if err != nil {
			return nil, err
		}
		return va.LastResponse(), nil
	}},
	{"Webhooks.Trigger", false, func(c *payments.Client) (*payments.Response, error) {
		r, err := c.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
		if err != nil {
			return nil, err
		}
		return r.LastResponse(), nil
	}},
	{"Do GET into a map", false, func(c *payments.Client) (*payments.Response, error) {
		var out map[string]any
		return c.Do(context.Background(), http.MethodGet, "/payments/recipients", nil, &out)
	}},
	{"Do DELETE without out", false, func(c *payments.Client) (*payments.Response, error) {
		return c.Do(context.Background(), http.MethodDelete, "/payments/recipients/"+recipientUUID, nil, nil)
	}},
}

// fzCheckErrorText fails when err's text could leak the API key.
func fzCheckErrorText(t *testing.T, err error) {
	t.Helper()
	if s := err.Error(); strings.Contains(s, harnessKey) {
		t.Fatalf("the API key is in the error text: %q", s)
	}
}

// FuzzDecodeEnvelope answers one operation with an arbitrary status, content
// type and body. The call must not panic and must give either a value (for a
// 2xx) or an *APIError or *MalformedResponseError that describes the status,
// carries the call's idempotency key, and never shows the API key.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Fuzz(func(t *testing.T, op uint8, status uint16, contentType string, body []byte) {
		o := fzOperations[int(op)%len(fzOperations)]
		a := fzAnswerFor(fzStatus(status, 100, 599), contentType, body)
		resp, err := o.call(fzClient(t, a))
		if a.calls != 1 {
			t.Fatalf("%s made %d attempts, want 1", o.name, a.calls)
		}
		success := a.status >= 200 && a.status <= 299

		if err == nil {
			if !success {
				t.Fatalf("%s succeeded on HTTP %d", o.name, a.status)
			}
			if resp == nil || resp.StatusCode != a.status || resp.Attempts != 1 {
				t.Fatalf("%s: response metadata %+v for HTTP %d", o.name, resp, a.status)
			}
			return
		}
		fzCheckErrorText(t, err)
		var (
			apiErr *payments.APIError
			malf   *payments.MalformedResponseError
			key    string
		)
		switch {
		case errors.As(err, &apiErr):
			if apiErr.StatusCode != a.status || apiErr.Attempts != 1 {
				t.Fatalf("%s: APIError for HTTP %d says HTTP %d after %d attempts", o.name, a.status, apiErr.StatusCode, apiErr.Attempts)
			}
			if success && !bytes.Contains(body, []byte("false")) {
				t.Fatalf("%s: APIError on HTTP %d though the body never says success is false: %v", o.name, a.status, err)
			}
			if n := min(len(body), 16<<10); !bytes.Equal(apiErr.Body, body[:n]) {
				t.Fatalf("%s: APIError.Body is not the first %d bytes of the body", o.name, n)
			}
			key = apiErr.IdempotencyKey
		case errors.As(err, &malf):
			if !success {
				t.Fatalf("%s: HTTP %d gave a MalformedResponseError rather than an APIError: %v", o.name, a.status, err)
			}
			if malf.Response == nil || malf.Response.StatusCode != a.status || malf.Reason == "" {
				t.Fatalf("%s: MalformedResponseError without its response or reason: %v", o.name, err)
			}
			if !errors.Is(err, payments.ErrMalformedResponse) {
				t.Fatalf("%s: MalformedResponseError does not match ErrMalformedResponse", o.name)
			}
			key = malf.Response.IdempotencyKey
		default:
			t.Fatalf("%s: HTTP %d gave %T, want *APIError or *MalformedResponseError: %v", o.name, a.status, err, err)
		}
		if got, ok := payments.IdempotencyKeyOf(err); got != key || ok != o.idempotent {
			t.Fatalf("%s: IdempotencyKeyOf = %q, %v; the error carries %q", o.name, got, ok, key)
		}
	})
}

// FuzzDecodeErrorBody answers Payments.Confirm with an arbitrary non-2xx
// status and body: the result is always an *APIError for that status that
// keeps the body (capped), matches its status's sentinel, says something
// useful when the body is not JSON, and never shows the API key, even when
// the body carries it.
func FuzzDecodeErrorBody(f *testing.F) {
	sentinels := map[int]error{
		401: payments.ErrUnauthorized, 403: payments.ErrForbidden, 404: payments.ErrNotFound,
		409: payments.ErrConflict, 422: payments.ErrUnprocessable, 429: payments.ErrRateLimited,
	}
	all := []error{payments.ErrUnauthorized, payments.ErrForbidden, payments.ErrNotFound,
		payments.ErrConflict, payments.ErrUnprocessable, payments.ErrRateLimited}
	f.Fuzz(func(t *testing.T, status uint16, contentType string, body []byte) {
		a := fzAnswerFor(fzStatus(status, 300, 599), contentType, body)
		_, err := fzClient(t, a).Payments.Confirm(context.Background(),
			&payments.PaymentConfirmParams{Reference: "order-1", QuoteID: quoteUUID})
		var apiErr *payments.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("HTTP %d gave %T, want *APIError: %v", a.status, err, err)
		}
		fzCheckErrorText(t, err)
		for _, fe := range apiErr.Errors {
			if strings.Contains(fe.Field+fe.Message, harnessKey) {
				t.Fatalf("the API key is in a field error: %+v", fe)
			}
		}
		if apiErr.StatusCode != a.status || apiErr.IdempotencyKey == "" {
			t.Fatalf("APIError %+v for HTTP %d", apiErr, a.status)
		}
		if n := min(len(body), 16<<10); !bytes.Equal(apiErr.Body, body[:n]) {
			t.Fatalf("APIError.Body is not the first %d bytes of the body", n)
		}
		if !json.Valid(body) && apiErr.Message == "" {
			t.Fatalf("a body that is not JSON gave no message: %v", err)
		}
		for _, s := range all {
			if errors.Is(err, s) != (s == sentinels[a.status]) {
				t.Fatalf("HTTP %d: errors.Is(err, %v) = %v", a.status, s, errors.Is(err, s))
			}
		}
		// Temporary is exactly what the SDK retries.
		temporary := a.status == 408 || a.status == 409 || a.status == 429 || a.status == 500 ||
			a.status == 502 || a.status == 503 || a.status == 504
		if apiErr.Temporary() != temporary {
			t.Fatalf("HTTP %d: Temporary() = %v", a.status, apiErr.Temporary())
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", a.status)) {
			t.Fatalf("the error text does not give the status: %v", err)
		}
	})
}

// fzRoundTrip re-encodes v and decodes the result into fresh, and reports
// whether v could be encoded (a time past year 9999 cannot).
func fzRoundTrip(t *testing.T, v, fresh any) bool {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		if !strings.Contains(err.Error(), "year outside of range") {
			t.Fatalf("a decoded value does not encode: %v", err)
		}
		return false
	}
	if err := json.Unmarshal(b, fresh); err != nil {
		t.Fatalf("the SDK cannot decode its own encoding %s: %v", b, err)
	}
	return true
}

// fzSameJSON fails unless a and b encode to the same JSON.
func fzSameJSON(t *testing.T, a, b any) {
	t.Helper()
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil || !bytes.Equal(ja, jb) {
		t.Fatalf("the value changed through encoding and decoding:\n%s\n%s", ja, jb)
	}
}

// FuzzDecodePayment decodes arbitrary JSON as a Payment, in every quote shape
// (nested, flat, aliases). It must not panic; a payment that decodes has a
// quote only with an id, its ConfirmParams name that quote, and it survives
// being stored as JSON and read back (as a merchant's queue or database
// would) with the same quote.
func FuzzDecodePayment(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var p payments.Payment
		if json.Unmarshal(data, &p) != nil {
			return
		}
		cp := p.ConfirmParams()
		if q := p.Quote; q == nil {
			if cp != nil {
				t.Fatalf("ConfirmParams %+v for a payment without a quote", cp)
			}
		} else {
			if q.ID == "" {
				t.Fatal("a quote without an id")
			}
			if cp == nil || cp.QuoteID != q.ID || cp.Reference != p.Reference {
				t.Fatalf("ConfirmParams %+v do not name quote %q of %q", cp, q.ID, p.Reference)
			}
			if q.Currency == "" && p.Currency != "" {
				t.Fatalf("the quote has no currency though the payment is in %q", p.Currency)
			}
		}
		var back payments.Payment
		if !fzRoundTrip(t, &p, &back) {
			return
		}
		if p.Quote != nil && back.Quote != nil && p.Quote.ExpiresAt.IsZero() && !p.CreatedAt.IsZero() {
			// Only when CreatedAt + QuoteLifetime is the zero time (year 0):
			// the stored zero expiry is then re-derived from CreatedAt.
			back.Quote.ExpiresAt = time.Time{}
		}
		fzSameJSON(t, &p, &back)
		if (p.Quote == nil) != (back.Quote == nil) || !p.Amount.Equal(back.Amount) {
			t.Fatalf("the quote or amount changed: %+v, %+v", p.Quote, back.Quote)
		}
	})
}

// FuzzDecodeRecipient decodes arbitrary JSON as a Recipient: no panic, a
// lossless round trip, and the printed identification never depends on the
// number or image it hides.
func FuzzDecodeRecipient(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var r payments.Recipient
		if json.Unmarshal(data, &r) != nil {
			return
		}
		var back payments.Recipient
		if fzRoundTrip(t, &r, &back) {
			fzSameJSON(t, &r, &back)
		}
		if id := r.Identification; id != nil {
			other := *id
			if other.Number != "" {
				other.Number = "other-number"
			}
			if other.Image != "" {
				other.Image = "b3RoZXI="
			}
			if id.String() != other.String() || id.GoString() != other.GoString() ||
				id.LogValue().String() != other.LogValue().String() {
				t.Fatalf("the printed identification shows its number or image: %s", id.String())
			}
		}
	})
}

// FuzzDecodeVirtualAccount decodes arbitrary JSON as a VirtualAccount: no
// panic and a lossless round trip.
func FuzzDecodeVirtualAccount(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var va payments.VirtualAccount
		if json.Unmarshal(data, &va) != nil {
			return
		}
		var back payments.VirtualAccount
		if fzRoundTrip(t, &va, &back) {
			fzSameJSON(t, &va, &back)
		}
	})
}

// FuzzAmount parses arbitrary text as an amount, as a merchant's code would
// from its own input, and initiates a payment with it. Validation accepts
// exactly the amounts the service can be sent: greater than zero, below
// 10^18, at most 18 decimal places as written on the wire. An accepted
// amount is sent as the JSON number d.String(), digit for digit, and reads
// back as an equal decimal; a refused one gives a *ValidationError naming
// only "amount", and nothing is sent. amount_limit is encoded the same way.
func FuzzAmount(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		d, err := decimal.NewFromString(s)
		if err != nil {
			return
		}
		a := fzAnswerFor(http.StatusOK, "application/json", []byte(okEnvelope(paymentJSON)))
		params := validInitiateParams()
		params.Amount = d
		_, err = fzClient(t, a).Payments.Initiate(context.Background(), params)

		wire := d.String()
		intPart, frac, _ := strings.Cut(strings.TrimPrefix(wire, "-"), ".")
		valid := !strings.HasPrefix(wire, "-") && wire != "0" && len(intPart) <= 18 && len(frac) <= 18

		var verr *payments.ValidationError
		switch {
		case errors.As(err, &verr):
			if len(verr.Fields) != 1 || !verr.Has("amount") {
				t.Fatalf("amount %q: the error names %v, want only amount", s, verr.Fields)
			}
			if a.calls != 0 {
				t.Fatalf("amount %q was refused but sent", s)
			}
			if valid {
				t.Fatalf("amount %q (sent as %s) was refused: %v", s, wire, err)
			}
		case err != nil:
			t.Fatalf("amount %q: %v", s, err)
		default:
			if !valid {
				t.Fatalf("amount %q (sent as %s) was accepted", s, wire)
			}
			fzCheckToken(t, a.sent, "amount", d)
		}

		limit, err := json.Marshal(payments.RecipientCreateParams{AmountLimit: &d})
		if err != nil {
			t.Fatalf("amount_limit %q does not encode: %v", s, err)
		}
		fzCheckToken(t, limit, "amount_limit", d)
	})
}

// fzCheckToken checks that member name of the JSON object body is the number
// d.String(), exactly, and decodes to a decimal equal to d.
func fzCheckToken(t *testing.T, body []byte, name string, d decimal.Decimal) {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		t.Fatalf("the body %s is not a JSON object: %v", body, err)
	}
	tok := string(members[name])
	if tok != d.String() {
		t.Fatalf("%s is sent as %s, want %s", name, tok, d.String())
	}
	back, err := decimal.NewFromString(tok)
	if err != nil || !back.Equal(d) {
		t.Fatalf("%s %s reads back as %v (%v), want %v", name, tok, back, err, d)
	}
}
