package openapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// checker is an http.RoundTripper around the SDK's transport that checks
// every request the SDK sends and every answer the fake gives against a
// contract, and a webhook receiver that checks every delivery. It counts the
// checked exchanges per operation.
type checker struct {
	c    *Contract
	base http.RoundTripper
	// mutateRequest and mutate, when set, change what the SDK sends before
	// it is checked and sent, and an answer before it is checked and handed
	// to the SDK (the tests that prove the check can fail).
	mutateRequest func(req *http.Request, body []byte) []byte
	mutate        func(req *http.Request, body []byte) []byte

	mu       sync.Mutex
	counts   map[string]int
	problems []error
}

func newChecker(t *testing.T, c *Contract) *checker {
	t.Helper()
	return &checker{c: c, base: http.DefaultTransport.(*http.Transport).Clone(), counts: map[string]int{}}
}

// found returns the problems found so far.
func (k *checker) found() []error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]error(nil), k.problems...)
}

func (k *checker) note(op string, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		k.problems = append(k.problems, err)
		return
	}
	k.counts[op]++
}

func (k *checker) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		if k.mutateRequest != nil {
			b = k.mutateRequest(req, b)
			req.ContentLength = int64(len(b))
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	reqErr := k.c.CheckRequest(req, body)
	resp, err := k.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	got, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if k.mutate != nil {
		got = k.mutate(req, got)
		resp.ContentLength = int64(len(got))
		resp.Header.Del("Content-Length")
	}
	resp.Body = io.NopCloser(bytes.NewReader(got))
	op := k.c.Operation(req)
	k.note(op, errors.Join(reqErr, k.c.CheckResponse(req, resp.StatusCode, resp.Header, got)))
	return resp, nil
}

// receiver checks each delivery against the document's webhook, then hands
// it to the SDK's verifying handler.
func (k *checker) receiver(t *testing.T, secret string) *httptest.Server {
	t.Helper()
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	h := webhook.NewHandler(verifier, func(context.Context, *payments.Event) error { return nil })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		k.note(webhookOperation, k.c.CheckWebhook(r.Header, body))
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fixture is the fake, with its webhooks going to a checking receiver, and
// a client whose transport checks every exchange.
type fixture struct {
	srv    *paymentstest.Server
	client *payments.Client
	check  *checker
}

func newFixture(t *testing.T, c *Contract, opts ...paymentstest.Option) *fixture {
	t.Helper()
	k := newChecker(t, c)
	secret := "whsec_" + uuid.NewString()
	hook := k.receiver(t, secret)
	srv := paymentstest.NewServer(append([]paymentstest.Option{
		paymentstest.WithWebhook(paymentstest.Webhook{URL: hook.URL, Secrets: []string{secret}}),
		paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond}}),
	}, opts...)...)
	t.Cleanup(srv.Close)
	client, err := payments.NewClient(srv.APIKey(),
		payments.WithBaseURL(srv.URL()),
		payments.WithHTTPClient(&http.Client{Transport: k, Timeout: 30 * time.Second}),
		payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 20 * time.Millisecond}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, client: client, check: k}
}

// wait lets the fake finish its webhook deliveries.
func (f *fixture) wait(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := f.srv.WaitForDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
}

func wantAPIError(t *testing.T, err error, status int, code payments.ErrorCode) {
	t.Helper()
	var apiErr *payments.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != status || (code != "" && apiErr.Code != code) {
		t.Fatalf("got %v, want an *APIError %d %s", err, status, code)
	}
}

func recipientParams() *payments.RecipientCreateParams {
	limit := payments.Amount{Decimal: decimal.RequireFromString("250000")}
	return &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual,
		AccountCurrency: "NGN", AccountCountryCode: "NG", AccountBankName: "Example Bank", AccountBankCode: "058",
		AmountLimit: &limit,
	}
}

// The quickstart's journey and its error cases, with every request the SDK
// sends, every answer the fake gives and every webhook it delivers checked
// against the strict contract (no member the document does not describe,
// no unknown status or event kind); every operation of the document is
// exercised at least once.
func TestContractQuickstartJourney(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, c.Strict(), paymentstest.WithBalance(decimal.RequireFromString("100000")))
	ctx := context.Background()

	// Recipient: create, replay with the same key, edit.
	rcpt, err := f.client.Recipients.Create(ctx, recipientParams())
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.client.Recipients.Create(ctx, recipientParams(), payments.WithIdempotencyKey(rcpt.LastResponse().IdempotencyKey))
	if err != nil || again.ID != rcpt.ID || again.LastResponse().Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the replay: %v, %+v", err, again)
	}
	if _, err := f.client.Recipients.Update(ctx, rcpt.ID, &payments.RecipientUpdateParams{AccountName: "Ada N. Okafor"}); err != nil {
		t.Fatal(err)
	}
	f.wait(t)

	// Virtual account, and money paid into it.
	va, err := f.client.VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual, AccountName: "Ada Okafor Collections", Email: "ada@example.com",
		FirstName: "Ada", LastName: "Okafor", BVN: "12345678901",
		Metadata: &payments.VirtualAccountMetadata{Country: "NG", UseCase: "collections"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.srv.SimulateIncomingPayment(string(va.AccountNumber), decimal.RequireFromString("50000"), va.Currency); err != nil {
		t.Fatal(err)
	}

	// Initiate and confirm.
	initiate := func(amount string) *payments.Payment {
		t.Helper()
		p, err := f.client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
			Amount: payments.Amount{Decimal: decimal.RequireFromString(amount)}, Currency: "NGN", RecipientID: rcpt.ID,
			Reference: "order-" + uuid.NewString(), Description: "Invoice 1042",
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	paid, err := f.client.Payments.Confirm(ctx, initiate("15000.50").ConfirmParams())
	if err != nil || paid.Status != payments.PaymentStatusCompleted {
		t.Fatalf("confirm: %v, %+v", err, paid)
	}

	// The error cases: a refusal of the fake's (422), a balance too low, an
	// expired quote, an unknown cursor, a wrong key, a retried 503.
	bad := recipientParams()
	bad.AccountNumber = "12345" // the SDK's rule takes it, the fake's does not
	_, err = f.client.Recipients.Create(ctx, bad)
	wantAPIError(t, err, http.StatusUnprocessableEntity, payments.CodeValidationFailed)
	_, err = f.client.Payments.Confirm(ctx, initiate("200000").ConfirmParams())
	wantAPIError(t, err, http.StatusUnprocessableEntity, payments.CodeInsufficientBalance)
	late := initiate("100")
	f.srv.Advance(payments.QuoteLifetime + time.Second)
	_, err = f.client.Payments.Confirm(ctx, late.ConfirmParams())
	wantAPIError(t, err, http.StatusUnprocessableEntity, payments.CodeQuoteExpired)
	_, err = f.client.Webhooks.ListEventsPage(ctx, &payments.EventListParams{After: uuid.NewString()})
	wantAPIError(t, err, http.StatusBadRequest, payments.CodeUnknownEventCursor)
	stranger, err := payments.NewClient("not-the-key", payments.WithBaseURL(f.srv.URL()),
		payments.WithHTTPClient(&http.Client{Transport: f.check}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = stranger.Webhooks.ListEventsPage(ctx, &payments.EventListParams{})
	wantAPIError(t, err, http.StatusUnauthorized, payments.CodeUnauthorized)
	if err := f.srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable,
		RetryAfter: time.Second, Method: http.MethodGet, Path: "/webhooks/events"}); err != nil {
		t.Fatal(err)
	}

	// A test event of every kind, then the whole event log a page of 3 at a
	// time (the first page meets the 503 and is retried).
	for _, kind := range allEventKinds {
		if _, err := f.client.Webhooks.Trigger(ctx, kind); err != nil {
			t.Fatal(err)
		}
	}
	f.wait(t)
	params, pages, listed := &payments.EventListParams{Limit: 3}, 0, 0
	for {
		page, err := f.client.Webhooks.ListEventsPage(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		pages, listed = pages+1, listed+len(page.Events)
		if !page.HasMore {
			break
		}
		params.After = page.Events[len(page.Events)-1].ID
	}
	if want := len(f.srv.Events()); listed != want || pages < 2 {
		t.Fatalf("listed %d events in %d pages, want all %d in several pages", listed, pages, want)
	}
	f.wait(t)

	for _, p := range f.check.found() {
		t.Error(p)
	}
	var missing []string
	for _, id := range c.operations() {
		if f.check.counts[id] == 0 {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("operations of the document never exercised: %v (checked: %v)", missing, f.check.counts)
	}
	ids := make([]string, 0, len(f.check.counts))
	for id := range f.check.counts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t.Logf("%-24s %3d exchanges checked", id, f.check.counts[id])
	}
}

// allEventKinds are the specification's event kinds.
var allEventKinds = []payments.EventType{
	payments.EventPaymentInitiated, payments.EventPaymentCompleted, payments.EventPaymentFailed,
	payments.EventPaymentRejected, payments.EventVirtualAccountPaymentReceived, payments.EventVirtualAccountCreated,
	payments.EventVirtualAccountUpdated, payments.EventRecipientCreated, payments.EventRecipientVerified,
	payments.EventRecipientVerificationFailed, payments.EventAccountBalanceLow, payments.EventAccountUpdated,
}

// renameIn returns a mutation that renames the JSON member from to to in
// the bodies of one operation only.
func renameIn(c *Contract, op, from, to string) func(*http.Request, []byte) []byte {
	return func(req *http.Request, body []byte) []byte {
		if c.Operation(req) != op {
			return body
		}
		return bytes.ReplaceAll(body, []byte(`"`+from+`":`), []byte(`"`+to+`":`))
	}
}

// violationOf returns the first *Violation among the problems whose Where is
// where, or fails.
func violationOf(t *testing.T, problems []error, where string) *Violation {
	t.Helper()
	for _, p := range problems {
		var vs Violations
		if !errors.As(p, &vs) {
			continue
		}
		for _, v := range vs {
			if v.Where == where {
				return v
			}
		}
	}
	t.Fatalf("no violation at %q among %v", where, problems)
	return nil
}

// The check fails when the fake renames total_amount in the initiate answer
// only, naming the quote's row of docs/assumptions.md.
func TestContractRejectsRenamedResponseField(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, c)
	f.check.mutate = renameIn(c, "payments.initiate", "total_amount", "total")
	ctx := context.Background()
	rcpt, err := f.client.Recipients.Create(ctx, recipientParams())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("100")}, Currency: "NGN", RecipientID: rcpt.ID, Reference: "order-" + uuid.NewString(),
	})
	v := violationOf(t, f.check.found(), "response body /data/quote/total_amount")
	if v.Assumption != "Quote in the initiate response" || v.Operation != "payments.initiate" || v.Detail != "is missing" || v.Unknown {
		t.Fatalf("got %+v", v)
	}
}

// The check fails when the SDK's confirm body names quote_id otherwise, and,
// with the strict contract, when an optional field of the initiate body is
// renamed (the document allows extra request fields for WithBodyField, the
// strict contract reports them).
func TestContractRejectsRenamedRequestField(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, c.Strict())
	confirm := renameIn(c, "payments.confirm", "quote_id", "quoteId")
	initiate := renameIn(c, "payments.initiate", "description", "desc")
	f.check.mutateRequest = func(req *http.Request, body []byte) []byte { return initiate(req, confirm(req, body)) }
	ctx := context.Background()
	rcpt, err := f.client.Recipients.Create(ctx, recipientParams())
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("100")}, Currency: "NGN", RecipientID: rcpt.ID,
		Reference: "order-" + uuid.NewString(), Description: "Invoice 1042",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.client.Payments.Confirm(ctx, p.ConfirmParams())
	problems := f.check.found()
	v := violationOf(t, problems, "request body /quote_id")
	if v.Assumption != "Confirm payment" || v.Operation != "payments.confirm" || v.Unknown {
		t.Fatalf("got %+v", v)
	}
	v = violationOf(t, problems, "request body /desc")
	if !v.Unknown || v.Assumption != "Other request fields" || v.Operation != "payments.initiate" {
		t.Fatalf("got %+v", v)
	}
}

// A delivery signed the Standard Webhooks way, an event kind the SDK does not
// know and a body without its data each name their row.
func TestCheckWebhookNamesTheAssumption(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"3f6c1f7e-8a2b-4c1d-9e0f-1a2b3c4d5e6f","event":"dispute.opened","created_at":"2026-01-01T00:00:00Z","data":{}}`)
	signed := http.Header{"Content-Type": {"application/json"},
		"Payments-Signature": {webhook.SignPayload(body, time.Now(), "whsec_test")}}
	if err := c.CheckWebhook(signed, body); err != nil {
		t.Fatalf("the lenient contract refused an unknown kind: %v", err)
	}
	var v *Violation
	if err := c.Strict().CheckWebhook(signed, body); !errors.As(err, &v) || !v.Unknown || v.Where != "request body /event" {
		t.Fatalf("an unknown kind, strict: %v", err)
	}

	standard, err := webhook.SignStandard("msg_1", time.Now(), body, "whsec_"+"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	standard.Set("Content-Type", "application/json")
	if err := c.CheckWebhook(standard, body); !errors.As(err, &v) || v.Assumption != "Webhook signature" || v.Where != "request header Payments-Signature" {
		t.Fatalf("a Standard Webhooks delivery: %v", err)
	}

	noData := []byte(`{"id":"3f6c1f7e-8a2b-4c1d-9e0f-1a2b3c4d5e6f","event":"payment.completed","created_at":"2026-01-01T00:00:00Z","payment":{}}`)
	signed.Set("Payments-Signature", webhook.SignPayload(noData, time.Now(), "whsec_test"))
	if err := c.CheckWebhook(signed, noData); !errors.As(err, &v) || v.Assumption != "Webhook body" || v.Where != "request body /data" {
		t.Fatalf("a body without data: %v", err)
	}
}
