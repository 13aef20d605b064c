package payments_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// surpriseLogMessage is the message of a surprise's log line.
const surpriseLogMessage = "payments: the service differs from the SDK's assumptions (logged once; see docs/assumptions.md)"

// surpriseCounter is an observer that counts every surprise reported to it,
// as paymentsotel's counter does.
type surpriseCounter struct {
	mu     sync.Mutex
	counts map[payments.Surprise]int
}

func (c *surpriseCounter) observe(ctx context.Context, _ payments.Operation) (context.Context, func(payments.OperationResult)) {
	return ctx, func(r payments.OperationResult) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.counts == nil {
			c.counts = map[payments.Surprise]int{}
		}
		for _, s := range r.Surprises {
			c.counts[s]++
		}
	}
}

func (c *surpriseCounter) all() map[payments.Surprise]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[payments.Surprise]int{}
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// surpriseLines returns the surprise log lines of sink.
func surpriseLines(t *testing.T, sink *logSink) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range sink.lines(t) {
		if l["msg"] == surpriseLogMessage {
			out = append(out, l)
		}
	}
	return out
}

// TestSurpriseReportedOncePerKind: each kind of surprise the client meets,
// met twice, gives one warning line (kind, detail, operation) and is
// counted twice by an observer; the calls end as they would without it.
func TestSurpriseReportedOncePerKind(t *testing.T) {
	withField := strings.Replace(paymentJSON, `"notes": "",`, `"notes": "", "completed_at": "SECRET-VALUE-4242", "quote_id_v2": 7,`, 1)
	eventPage := okEnvelope(`{"events":[{"id":"evt-1","event":"payout.settled","type":"payout.settled","created_at":"2025-01-31T09:00:00Z",
		"data":{"id":"p","status":"processing"}}],"has_more":false}`)
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		answer  httpmock.Responder
		call    func(c *payments.Client) error
		wantErr bool
		want    []payments.Surprise
	}{
		{"unknown field", http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(withField)),
			func(c *payments.Client) error {
				_, err := c.Payments.Initiate(context.Background(), validInitiateParams())
				return err
			}, false, []payments.Surprise{
				{Kind: payments.SurpriseUnknownField, Detail: "data.completed_at"},
				{Kind: payments.SurpriseUnknownField, Detail: "data.quote_id_v2"}}},
		{"unknown field of the quote", http.MethodPost, "/payments/initiate",
			jsonResponder(200, okEnvelope(strings.Replace(paymentJSON, `"fee": "25.00",`, `"fee": "25.00", "fee_currency": "NGN",`, 1))),
			func(c *payments.Client) error {
				_, err := c.Payments.Initiate(context.Background(), validInitiateParams())
				return err
			}, false, []payments.Surprise{{Kind: payments.SurpriseUnknownField, Detail: "data.quote.fee_currency"}}},
		{"payment status", http.MethodPost, "/payments/confirm",
			jsonResponder(200, okEnvelope(strings.Replace(confirmedPaymentJSON, `"completed"`, `"processing"`, 1))),
			func(c *payments.Client) error {
				p, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
				if err == nil && p.Status != "processing" {
					t.Errorf("status %q, want it passed through", p.Status)
				}
				return err
			}, false, []payments.Surprise{{Kind: payments.SurprisePaymentStatus, Detail: "processing"}}},
		{"error body not the envelope", http.MethodPost, "/payments/confirm",
			typedResponder(502, "text/html; charset=utf-8", "<html><body>Bad gateway</body></html>"),
			func(c *payments.Client) error {
				_, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"}, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
				return err
			}, true, []payments.Surprise{{Kind: payments.SurpriseErrorBody, Detail: "the body is not JSON (text/html; charset=utf-8)"}}},
		{"error body with a numeric code and listed messages", http.MethodPost, "/payments/confirm",
			jsonResponder(422, `{"success":false,"message":"Invalid","stan":"s","code":4001,"errors":["amount is required"]}`),
			func(c *payments.Client) error {
				_, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
				return err
			}, true, []payments.Surprise{
				{Kind: payments.SurpriseErrorBody, Detail: "code is a number"},
				{Kind: payments.SurpriseErrorBody, Detail: "errors is a list of strings (read without field names)"}}},
		{"error body from a gateway", http.MethodPost, "/payments/confirm",
			jsonResponder(401, `{"error":{"message":"Unauthorized","code":"unauthorized"}}`),
			func(c *payments.Client) error {
				_, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
				return err
			}, true, []payments.Surprise{
				{Kind: payments.SurpriseErrorBody, Detail: "no success:false"},
				{Kind: payments.SurpriseErrorBody, Detail: "no message, an error member instead"}}},
		{"success status", http.MethodPost, "/payments/recipients", jsonResponder(200, okEnvelope(recipientJSON)),
			func(c *payments.Client) error {
				_, err := c.Recipients.Create(context.Background(), validRecipientParams())
				return err
			}, false, []payments.Surprise{{Kind: payments.SurpriseSuccessStatus, Detail: "recipients.create answered 200, assumed 201"}}},
		{"event kind, member and status in a page", http.MethodGet, "/webhooks/events", jsonResponder(200, eventPage),
			func(c *payments.Client) error {
				_, err := c.Webhooks.ListEventsPage(context.Background(), nil)
				return err
			}, false, []payments.Surprise{
				{Kind: payments.SurpriseEventKind, Detail: "payout.settled"},
				{Kind: payments.SurpriseUnknownField, Detail: "data.events[].type"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var counter surpriseCounter
			h, sink := loggedHarness(t, slog.LevelWarn, payments.WithObserver(counter.observe))
			h.on(tc.method, tc.path, tc.answer)
			for range 2 {
				err := tc.call(h.client)
				if tc.wantErr {
					require.Error(t, err)
				} else {
					require.NoError(t, err, "a surprise never fails the call")
				}
			}
			want := map[payments.Surprise]int{}
			for _, s := range tc.want {
				want[s] = 2
			}
			assert.Equal(t, want, counter.all(), "the observer counts every one")
			assertSurpriseLines(t, sink, tc.want)
		})
	}
}

// TestSurprisesOncePerClient: the log line comes once per Client: a second
// client logs its own; with the warnings off, observers still count.
func TestSurprisesOncePerClient(t *testing.T) {
	answer := jsonResponder(200, okEnvelope(strings.Replace(confirmedPaymentJSON, `"completed"`, `"processing"`, 1)))
	confirm := func(c *payments.Client) {
		_, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
		require.NoError(t, err)
	}
	for range 2 {
		h, sink := loggedHarness(t, slog.LevelWarn)
		h.on(http.MethodPost, "/payments/confirm", answer)
		confirm(h.client)
		confirm(h.client)
		assert.Len(t, surpriseLines(t, sink), 1)
	}
	var counter surpriseCounter
	h := newHarness(t, payments.WithObserver(counter.observe), payments.WithLogger(slog.New(slog.DiscardHandler)))
	h.on(http.MethodPost, "/payments/confirm", answer)
	confirm(h.client)
	assert.Equal(t, map[payments.Surprise]int{{Kind: payments.SurprisePaymentStatus, Detail: "processing"}: 1}, counter.all())
}

// TestSurprisesReachObservers: OperationResult.Surprises lists what the
// operation met, nil when nothing.
func TestSurprisesReachObservers(t *testing.T) {
	var got [][]payments.Surprise
	obs := func(ctx context.Context, _ payments.Operation) (context.Context, func(payments.OperationResult)) {
		return ctx, func(r payments.OperationResult) { got = append(got, r.Surprises) }
	}
	h := newHarness(t, payments.WithObserver(obs))
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)).
		Then(jsonResponder(201, okEnvelope(strings.Replace(recipientJSON, `"limit"`, `"verified": true, "limit"`, 1)))))
	for range 2 {
		_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
		require.NoError(t, err)
	}
	assert.Equal(t, [][]payments.Surprise{nil, {{Kind: payments.SurpriseUnknownField, Detail: "data.verified"}}}, got)
}

// TestFakeHoldsNoSurprises: paymentstest follows every assumption, so a
// journey through it (errors included) reports no surprise.
func TestFakeHoldsNoSurprises(t *testing.T) {
	var counter surpriseCounter
	sink := &logSink{}
	srv := paymentstest.NewServer()
	defer srv.Close()
	c := srv.Client(payments.WithObserver(counter.observe),
		payments.WithLogger(slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	ctx := context.Background()
	r, err := c.Recipients.Create(ctx, validRecipientParams())
	require.NoError(t, err)
	p, err := c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: mustDecimal("2500")}, Currency: "NGN",
		RecipientID: r.ID, Reference: "order-surprise"})
	require.NoError(t, err)
	_, err = c.Payments.Confirm(ctx, p.ConfirmParams())
	require.NoError(t, err)
	_, err = c.Payments.Confirm(ctx, &payments.PaymentConfirmParams{Reference: "nope", QuoteID: "nope"})
	require.Error(t, err)
	_, err = c.VirtualAccounts.Create(ctx, validVirtualAccountParams())
	require.NoError(t, err)
	for _, err := range c.Webhooks.ListEvents(ctx, nil) {
		require.NoError(t, err)
	}
	assert.Empty(t, counter.all())
	assert.Empty(t, surpriseLines(t, sink))
}

// TestFakeToldToDifferIsCaught: against the fake told to differ in each of
// the ways paymentstest.WithDifferences knows, the client either reports
// the surprise (once, through the observer) or, where the difference would
// stand in for money or for the end of a list, fails the call with a typed
// error; never a silent zero. The delivery differences are caught by the
// handler: TestHandlerCatchesADifferentSignatureHeader.
func TestFakeToldToDifferIsCaught(t *testing.T) {
	type outcome struct {
		surprises map[payments.Surprise]int
		initErr   error
		quote     *payments.Quote
		confirm   error
		refusal   error
		list      error
	}
	journey := func(t *testing.T, difference string) outcome {
		t.Helper()
		var counter surpriseCounter
		srv := paymentstest.NewServer(paymentstest.WithDifferences(difference))
		t.Cleanup(srv.Close)
		c := srv.Client(payments.WithObserver(counter.observe))
		ctx := context.Background()
		var o outcome
		r, err := c.Recipients.Create(ctx, validRecipientParams())
		require.NoError(t, err)
		p, err := c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: mustDecimal("2500")},
			Currency: "NGN", RecipientID: r.ID, Reference: "order-" + difference})
		o.initErr = err
		if err == nil {
			o.quote = p.Quote
			_, o.confirm = c.Payments.Confirm(ctx, p.ConfirmParams())
		}
		// A refusal the service makes, with field errors: an account
		// number of 5 digits, which the SDK lets through and the fake refuses.
		bad := validRecipientParams()
		bad.AccountNumber = "01234"
		_, o.refusal = c.Recipients.Create(ctx, bad)
		for _, err := range c.Webhooks.ListEvents(ctx, nil) {
			if err != nil {
				o.list = err
				break
			}
		}
		o.surprises = counter.all()
		return o
	}
	kinds := func(o outcome) map[payments.SurpriseKind]bool {
		m := map[payments.SurpriseKind]bool{}
		for s := range o.surprises {
			m[s.Kind] = true
		}
		return m
	}
	t.Run("completed-at", func(t *testing.T) {
		o := journey(t, "completed-at")
		assert.Contains(t, o.surprises, payments.Surprise{Kind: payments.SurpriseUnknownField, Detail: "data.completed_at"})
	})
	t.Run("status-processing", func(t *testing.T) {
		o := journey(t, "status-processing")
		assert.Contains(t, o.surprises, payments.Surprise{Kind: payments.SurprisePaymentStatus, Detail: "processing"})
	})
	for _, d := range []string{"html-errors", "numeric-codes", "field-errors"} {
		t.Run(d, func(t *testing.T) {
			o := journey(t, d)
			var apiErr *payments.APIError
			require.ErrorAs(t, o.refusal, &apiErr)
			assert.True(t, kinds(o)[payments.SurpriseErrorBody], "no error_body surprise: %v", o.surprises)
		})
	}
	t.Run("quote-renamed", func(t *testing.T) {
		o := journey(t, "quote-renamed")
		var merr *payments.MalformedResponseError
		require.ErrorAs(t, o.initErr, &merr, "a quote whose fee and total cannot be read must not read as zero")
		assert.Contains(t, o.initErr.Error(), "fee")
	})
	t.Run("minor-units", func(t *testing.T) {
		o := journey(t, "minor-units")
		var merr *payments.MalformedResponseError
		require.ErrorAs(t, o.initErr, &merr, "amounts 100 times too large must not pass")
	})
	t.Run("list-cursor", func(t *testing.T) {
		o := journey(t, "list-cursor")
		require.ErrorIs(t, o.list, payments.ErrEventPageUnreadable, "a page without has_more must not read as the end")
	})
	t.Run("confirm-path", func(t *testing.T) {
		o := journey(t, "confirm-path")
		var apiErr *payments.APIError
		require.ErrorAs(t, o.confirm, &apiErr)
		assert.Equal(t, http.StatusNotFound, apiErr.StatusCode)
	})
	t.Run("quote-flat", func(t *testing.T) {
		// An accepted shape (docs/assumptions.md): read whole, no surprise.
		o := journey(t, "quote-flat")
		require.NoError(t, o.initErr)
		require.NotNil(t, o.quote)
		assert.True(t, o.quote.Fee.IsPositive() && o.quote.TotalAmount.IsPositive(), "quote %+v", o.quote)
	})
}
