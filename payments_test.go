package payments_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

const paymentJSON = `{
	"id": "` + paymentUUID + `",
	"reference": "order-1042",
	"status": "pending",
	"amount": "15000.50",
	"currency": "NGN",
	"description": "Invoice 1042",
	"type": "transfer",
	"sub_type": "domestic",
	"category": "payout",
	"transaction_date": "2025-03-01T10:00:00Z",
	"tags": "invoice,march",
	"is_reversed": false,
	"is_completed": false,
	"channel": "api",
	"notes": "",
	"created_at": "2025-03-01T10:00:00Z",
	"updated_at": "2025-03-01T10:00:00Z",
	"quote": {
		"quote_id": "` + quoteUUID + `",
		"amount": "15000.50",
		"fee": "25.00",
		"exchange_rate": "1",
		"total_amount": "15025.50",
		"currency": "NGN",
		"expires_at": "2025-03-01T10:05:00Z"
	}
}`

const confirmedPaymentJSON = `{
	"id": "` + paymentUUID + `",
	"reference": "order-1042",
	"status": "completed",
	"amount": "15000.50",
	"currency": "NGN",
	"is_completed": true,
	"created_at": "2025-03-01T10:00:00Z",
	"updated_at": "2025-03-01T10:01:00Z"
}`

func validInitiateParams() *payments.PaymentInitiateParams {
	return &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: mustDecimal("15000.50")}, Currency: "NGN", RecipientID: recipientUUID, Reference: "order-1",
	}
}

// fakeClock is a settable clock for SetClockForTest.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// echoInitiate answers an initiate as a service would: paymentJSON's
// payment for the amount and currency sent (the harness has read the body
// it recorded: the responder reads the copy it put back).
func echoInitiate(req *http.Request) (*http.Response, error) {
	var sent struct {
		Amount   json.Number `json:"amount"`
		Currency string      `json:"currency"`
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &sent); err != nil {
		return nil, err
	}
	data := strings.NewReplacer(`"15000.50"`, `"`+sent.Amount.String()+`"`, `"NGN"`, `"`+sent.Currency+`"`).Replace(paymentJSON)
	return jsonResponder(200, okEnvelope(data))(req)
}

// initiateAnswering runs Initiate against a server answering with data.
func initiateAnswering(t *testing.T, data string) (*payments.Payment, error) {
	t.Helper()
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(data)))
	return h.client.Payments.Initiate(context.Background(), validInitiateParams())
}

func TestQuoteNested(t *testing.T) {
	p, err := initiateAnswering(t, paymentJSON)
	require.NoError(t, err)
	require.NotNil(t, p.Quote)
	q := p.Quote
	assert.Equal(t, quoteUUID, q.QuoteID)
	assert.Equal(t, "15000.5", q.Amount.String())
	assert.True(t, q.Fee.Equal(mustDecimal("25")))
	assert.True(t, q.ExchangeRate.Equal(mustDecimal("1")))
	assert.True(t, q.TotalAmount.Equal(mustDecimal("15025.50")))
	assert.Equal(t, "NGN", q.Currency)
	assert.Equal(t, time.Date(2025, 3, 1, 10, 5, 0, 0, time.UTC), q.ExpiresAt.UTC())

	assert.Equal(t, paymentUUID, p.ID)
	assert.Equal(t, "order-1042", p.Reference)
	assert.Equal(t, payments.PaymentStatusPending, p.Status)
	assert.True(t, p.Amount.Equal(mustDecimal("15000.50")))
	assert.Equal(t, "invoice,march", p.Tags)
	assert.Equal(t, &payments.PaymentConfirmParams{Reference: "order-1042", QuoteID: quoteUUID}, p.ConfirmParams())
}

func TestQuoteAmountsAsNumbersKeepDigits(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(`{"id":"p1","reference":"r","status":"pending","amount":1234567890.123456789,"currency":"USD",
		"quote":{"quote_id":"q1","amount":1234567890.123456789,"fee":0.000000000000000001,
		"exchange_rate":1530.25,"total_amount":1234567890.123456790,"expires_at":"2025-03-01T10:05:00Z"}}`)))
	params := validInitiateParams()
	params.Amount, params.Currency = payments.Amount{Decimal: mustDecimal("1234567890.123456789")}, "USD"
	p, err := h.client.Payments.Initiate(context.Background(), params)
	require.NoError(t, err)
	assert.Equal(t, "1234567890.123456789", p.Amount.String())
	assert.Equal(t, "1234567890.123456789", p.Quote.Amount.String())
	assert.Equal(t, "0.000000000000000001", p.Quote.Fee.String())
	assert.Equal(t, "1530.25", p.Quote.ExchangeRate.String())
	assert.Equal(t, "1234567890.12345679", p.Quote.TotalAmount.String())
	assert.Equal(t, "USD", p.Quote.Currency, "the payment's currency when the quote names none")
}

func TestQuoteFlatFields(t *testing.T) {
	p, err := initiateAnswering(t, `{"id":"`+paymentUUID+`","reference":"order-1","status":"pending",
		"amount":"15000.50","currency":"NGN","created_at":"2025-03-01T09:00:00Z",
		"quote_id":"`+quoteUUID+`","fee":"1.50","exchange_rate":"1","total_amount":"101.50"}`)
	require.NoError(t, err)
	require.NotNil(t, p.Quote)
	assert.Equal(t, quoteUUID, p.Quote.QuoteID)
	assert.True(t, p.Quote.Amount.Equal(mustDecimal("15000.50")))
	assert.True(t, p.Quote.Fee.Equal(mustDecimal("1.5")))
	assert.True(t, p.Quote.TotalAmount.Equal(mustDecimal("101.5")))
	assert.Equal(t, "NGN", p.Quote.Currency)
	assert.Equal(t, time.Date(2025, 3, 1, 9, 5, 0, 0, time.UTC), p.Quote.ExpiresAt.UTC(), "payment created_at + 5 min")
}

// TestFlatQuoteOnlyInTheSDKsDecoding: the service's flat quote is read where
// the SDK decodes (a response, a payment event); a caller's json.Unmarshal of
// a Payment is plain encoding/json, which reads the nested quote only.
func TestFlatQuoteOnlyInTheSDKsDecoding(t *testing.T) {
	flat := `{"id":"` + paymentUUID + `","reference":"order-1","status":"completed","amount":"100.00",
		"currency":"NGN","quote_id":"` + quoteUUID + `","fee":"1.50","exchange_rate":"1","total_amount":"101.50"}`
	ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventPaymentCompleted, flat))
	require.NoError(t, err)
	p, err := ev.Payment()
	require.NoError(t, err)
	require.NotNil(t, p.Quote, "the event's payment has its flat quote")
	assert.Equal(t, quoteUUID, p.Quote.QuoteID)
	assert.True(t, p.Quote.TotalAmount.Equal(mustDecimal("101.5")))

	var plain payments.Payment
	require.NoError(t, json.Unmarshal([]byte(flat), &plain))
	assert.Equal(t, paymentUUID, plain.ID)
	assert.Nil(t, plain.Quote, "plain decoding reads no flat quote")
	assert.Nil(t, plain.RawJSON(), "nor keeps raw JSON")

	stored, err := json.Marshal(p)
	require.NoError(t, err)
	var back payments.Payment
	require.NoError(t, json.Unmarshal(stored, &back), "a stored payment reads back")
	require.NotNil(t, back.Quote)
	assert.Equal(t, quoteUUID, back.Quote.QuoteID)
	assert.True(t, back.Quote.TotalAmount.Equal(p.Quote.TotalAmount))
	again, err := json.Marshal(&back)
	require.NoError(t, err)
	assert.JSONEq(t, string(stored), string(again))
}

// TestQuoteAliasesAreNotGuessed: only the Assumptions table's names are
// read (nested or flat); no document supports id, fees, rate or
// amount_to_collect, so a quote named only by them is no quote (Initiate
// fails as an unknown outcome) and RawJSON keeps them for the caller.
func TestQuoteAliasesAreNotGuessed(t *testing.T) {
	data := `{"id":"p","reference":"r","status":"pending","amount":"15000.50","currency":"NGN",
		"quote":{"id":"q-alias","fees":"9","rate":"9","amount_to_collect":"9"}}`
	p, err := initiateAnswering(t, data)
	assert.Nil(t, p)
	var merr *payments.MalformedResponseError
	require.ErrorAs(t, err, &merr)
	assert.Contains(t, merr.Reason, "no quote_id (data.quote.quote_id), no fee (data.quote.fee), no exchange_rate (data.quote.exchange_rate), no total_amount (data.quote.total_amount)")
	assert.Contains(t, string(merr.Response.Body), data, "what was received stays readable")

	p, err = initiateAnswering(t, `{"id":"p","reference":"r","status":"pending","amount":"15000.50","currency":"NGN",
		"quote":{"quote_id":"q-main","fee":"1","fees":"9","exchange_rate":"2","rate":"9","total_amount":"3","amount_to_collect":"9"}}`)
	require.NoError(t, err)
	assert.Equal(t, "q-main", p.Quote.QuoteID)
	assert.Equal(t, "1", p.Quote.Fee.String())
	assert.Equal(t, "2", p.Quote.ExchangeRate.String())
	assert.Equal(t, "3", p.Quote.TotalAmount.String())
}

func TestQuoteExpiryFromQuoteCreatedAt(t *testing.T) {
	p, err := initiateAnswering(t, `{"id":"p","reference":"r","status":"pending","amount":"15000.50","currency":"NGN","created_at":"2025-03-01T08:00:00Z",
		"quote":{"quote_id":"q1","fee":"0","exchange_rate":"1","total_amount":"15000.50","created_at":"2025-03-01T09:30:00Z"}}`)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2025, 3, 1, 9, 35, 0, 0, time.UTC), p.Quote.ExpiresAt.UTC())
}

func TestQuoteExpiryFromPaymentCreatedAt(t *testing.T) {
	p, err := initiateAnswering(t, `{"id":"p","reference":"r","status":"pending","amount":"15000.50","currency":"NGN","created_at":"2025-03-01T08:00:00Z",
		"quote":{"quote_id":"q1","fee":"0","exchange_rate":"1","total_amount":"15000.50"}}`)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2025, 3, 1, 8, 5, 0, 0, time.UTC), p.Quote.ExpiresAt.UTC())
}

func TestQuoteExpiryFromReceiptTime(t *testing.T) {
	h := newHarness(t)
	clock := &fakeClock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	payments.SetClockForTest(h.client, clock.Now)
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(
		`{"id":"p","reference":"r","status":"pending","amount":"15000.50","currency":"NGN","quote":{"quote_id":"q1","fee":"0.10","exchange_rate":"1","total_amount":"15000.60"}}`)))
	p, err := h.client.Payments.Initiate(context.Background(), validInitiateParams())
	require.NoError(t, err)
	assert.Equal(t, clock.Now().Add(5*time.Minute), p.Quote.ExpiresAt)
	assert.Equal(t, 5*time.Minute, payments.QuoteLifetime)
}

func TestInitiateWithoutQuoteIDIsMalformed(t *testing.T) {
	for name, data := range map[string]string{
		"no quote":         `{"id":"p","reference":"r","status":"pending","amount":"1","currency":"NGN","status":"pending"}`,
		"null quote":       `{"id":"p","reference":"r","status":"pending","amount":"1","quote":null}`,
		"quote without id": `{"id":"p","reference":"r","status":"pending","amount":"1","quote":{"fee":"1","total_amount":"2"}}`,
		"empty quote id":   `{"id":"p","reference":"r","status":"pending","amount":"1","quote":{"quote_id":""}}`,
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(data)))
			p, err := h.client.Payments.Initiate(context.Background(), validInitiateParams())
			assert.Nil(t, p)
			var merr *payments.MalformedResponseError
			require.ErrorAs(t, err, &merr)
			assert.ErrorIs(t, err, payments.ErrMalformedResponse)
			assert.Contains(t, merr.Reason, "data.quote.quote_id")
			require.NotNil(t, merr.Response, "what was received is kept")
			assert.Equal(t, stanUUID, merr.Response.Stan)
			key, ok := payments.IdempotencyKeyOf(err)
			assert.True(t, ok)
			assert.Equal(t, h.requests()[0].Header.Get("Idempotency-Key"), key)
		})
	}
}

// TestConfirmAlwaysAsksTheService: the client keeps no book of quotes and
// no clock of the service's: a quote long past its expires_at (by any
// clock, Date header or not) is sent, and only the service's answer says
// it expired.
func TestConfirmAlwaysAsksTheService(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(
		`{"id":"p","reference":"order-1","status":"pending","amount":"15000.50","currency":"NGN",
		"quote":{"quote_id":"q-old","fee":"0","exchange_rate":"1","total_amount":"15000.50","expires_at":"2001-01-01T00:00:00Z"}}`)).
		HeaderSet(http.Header{"Date": {time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat)}}))
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(422,
		`{"success":false,"message":"Quote has expired","stan":"s","code":"quote_expired"}`))
	p, err := h.client.Payments.Initiate(context.Background(), validInitiateParams())
	require.NoError(t, err)
	assert.True(t, p.Quote.ExpiresAt.Before(time.Now()), "the quote is past its expiry")
	_, err = h.client.Payments.Confirm(context.Background(), p.ConfirmParams())
	assert.ErrorIs(t, err, payments.CodeQuoteExpired, "the service's answer is the one signal")
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 2, h.calls(), "the confirm was sent")
	assert.JSONEq(t, `{"reference":"order-1","quote_id":"q-old"}`, string(h.requests()[1].Body))
}

func TestConfirmSendsUnknownQuotes(t *testing.T) {
	// A quote this client did not issue (another process, a restart) is sent:
	// only the service knows whether it is still valid.
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(200, okEnvelope(confirmedPaymentJSON)))
	_, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "from-elsewhere"})
	require.NoError(t, err)
	assert.Equal(t, 1, h.calls())
}

func TestQuoteExpiredCodeFromServiceMatchesCodeQuoteExpired(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(422,
		`{"success":false,"message":"Quote has expired","stan":"s","code":"quote_expired"}`))
	_, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
	assert.ErrorIs(t, err, payments.CodeQuoteExpired)
	assert.ErrorIs(t, err, payments.ErrUnprocessable)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 1, apiErr.Attempts)

	h = newHarness(t)
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(422,
		`{"success":false,"message":"Insufficient funds","code":"insufficient_funds"}`))
	_, err = h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
	assert.NotErrorIs(t, err, payments.CodeQuoteExpired)
}

func TestConfirmParamsWithoutQuote(t *testing.T) {
	assert.Nil(t, (&payments.Payment{}).ConfirmParams())
}

func TestWirePaymentsInitiate(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/initiate", echoInitiate)

	p, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount:              payments.Amount{Decimal: mustDecimal("1234567890.123456789")},
		Currency:            "NGN",
		RecipientID:         recipientUUID,
		Description:         "Invoice 1042",
		Reference:           "order-1042",
		TransactionType:     "transfer",
		TransactionCategory: "payout",
		TransactionTags:     "invoice,march",
		TransactionNotes:    "net 30",
		Channel:             "api",
		SubType:             "domestic",
	})
	require.NoError(t, err)

	req := h.onlyRequest(t)
	key := assertKeyedPost(t, req, "/payments/initiate")
	assert.JSONEq(t, `{
		"amount": 1234567890.123456789,
		"currency": "NGN",
		"recipient_id": "`+recipientUUID+`",
		"description": "Invoice 1042",
		"reference": "order-1042",
		"transaction_type": "transfer",
		"transaction_category": "payout",
		"transaction_tags": "invoice,march",
		"transaction_notes": "net 30",
		"channel": "api",
		"sub_type": "domestic"
	}`, string(req.Body))
	assert.Contains(t, string(req.Body), `{"amount":1234567890.123456789,`)
	assert.Equal(t, key, p.LastResponse().IdempotencyKey)
}

func TestWirePaymentsInitiateMinimal(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(paymentJSON)))
	_, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: mustDecimal("15000.50")}, Currency: "NGN", RecipientID: recipientUUID, Reference: "order-1042",
	})
	require.NoError(t, err)
	req := h.onlyRequest(t)
	assert.Equal(t, `{"amount":15000.5,"currency":"NGN","recipient_id":"`+recipientUUID+`","reference":"order-1042"}`,
		string(req.Body))
}

func TestWirePaymentsConfirm(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(200, okEnvelope(confirmedPaymentJSON)))

	p, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{
		Reference: "order-1042", QuoteID: quoteUUID,
	})
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusCompleted, p.Status)
	assert.True(t, p.IsCompleted)

	req := h.onlyRequest(t)
	assertKeyedPost(t, req, "/payments/confirm")
	assert.Equal(t, `{"reference":"order-1042","quote_id":"`+quoteUUID+`"}`, string(req.Body))
}

func TestWireAmountsKeepTheirDigits(t *testing.T) {
	for _, s := range []string{
		"1234567890.123456789",
		"0.000000000000000001",
		"999999999999999999.999999999999999999",
		"42",
		"0.1",
	} {
		t.Run(s, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodPost, "/payments/initiate", echoInitiate)
			_, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
				Amount: payments.Amount{Decimal: mustDecimal(s)}, Currency: "NGN", RecipientID: recipientUUID, Reference: "r-1",
			})
			require.NoError(t, err)
			req := h.onlyRequest(t)
			assert.Contains(t, string(req.Body), `{"amount":`+s+`,`)
		})
	}
}

func TestWireCallerKeyAndExtraHeader(t *testing.T) {
	h := newHarness(t, payments.WithUserAgent("acme-checkout/2.3"))
	h.on(http.MethodPost, "/payments/initiate", echoInitiate)
	p, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: mustDecimal("10")}, Currency: "NGN", RecipientID: recipientUUID, Reference: "order-9",
	}, payments.WithIdempotencyKey("order-9-initiate"), payments.WithHeader("X-Request-Id", "req-123"))
	require.NoError(t, err)
	hdr := h.onlyRequest(t).Header
	assert.Equal(t, []string{"order-9-initiate"}, hdr.Values("Idempotency-Key"))
	assert.Equal(t, []string{"req-123"}, hdr.Values("X-Request-Id"))
	assert.Regexp(t, `^acme-checkout/2\.3 payments-go/`+regexp.QuoteMeta(payments.Version)+` \(go`, hdr.Get("User-Agent"))
	assert.Equal(t, "order-9-initiate", p.LastResponse().IdempotencyKey)
}

// FuzzDecodePayment decodes arbitrary JSON as a Payment the way the SDK
// does (the data of a payment event), in every quote shape (nested, flat,
// aliases). It must not panic; a payment that decodes has a quote only with
// an id, its ConfirmParams name that quote, and it survives being stored as
// JSON and read back with json.Unmarshal (as a merchant's queue or database
// would) with the same quote.
func FuzzDecodePayment(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := payments.ParseEvent(whEventJSON("evt-fuzz", payments.EventPaymentCompleted, string(data)))
		if err != nil {
			return
		}
		pp, err := ev.Payment()
		if err != nil {
			return
		}
		p := *pp
		cp := p.ConfirmParams()
		if q := p.Quote; q == nil {
			if cp != nil {
				t.Fatalf("ConfirmParams %+v for a payment without a quote", cp)
			}
		} else {
			if q.QuoteID == "" {
				t.Fatal("a quote without an id")
			}
			if cp == nil || cp.QuoteID != q.QuoteID || cp.Reference != p.Reference {
				t.Fatalf("ConfirmParams %+v do not name quote %q of %q", cp, q.QuoteID, p.Reference)
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
