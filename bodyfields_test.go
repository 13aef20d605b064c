package payments_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

func TestWithBodyFieldAddsTopLevelFields(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(paymentJSON)))
	_, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: mustDecimal("15000.50")}, Currency: "NGN", RecipientID: recipientUUID, Reference: "order-1042",
	},
		payments.WithBodyField("purpose_code", "SALA"),
		payments.WithBodyField("beneficiary", json.RawMessage(` {"tax_id": "X1", "n": 1.50} `)),
		payments.WithBodyField("purpose_code", "SUPP"), // the last one wins
		payments.WithIdempotencyKey("payout-7-initiate"),
	)
	require.NoError(t, err)
	req := h.onlyRequest(t)
	assert.Equal(t, `{"amount":15000.5,"currency":"NGN","recipient_id":"`+recipientUUID+`","reference":"order-1042",`+
		`"purpose_code":"SUPP","beneficiary":{"tax_id":"X1","n":1.50}}`, string(req.Body))
	assert.Equal(t, "payout-7-initiate", req.Header.Get("Idempotency-Key"))
}

// A body field named like a field of the call's params, in any letter case,
// sent or left out as empty, is refused and nothing is sent: "AMOUNT": -5
// beside the validated "amount" would reach a service that matches names
// without case, and an exact "amount" would replace it unvalidated.
func TestWithBodyFieldRefusesTheParamsFields(t *testing.T) {
	h := newHarness(t)
	initiate := func(name string, value any) error {
		_, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
			Amount: payments.Amount{Decimal: mustDecimal("15000.50")}, Currency: "NGN", RecipientID: recipientUUID, Reference: "order-1042",
		}, payments.WithBodyField("purpose_code", "SALA"), payments.WithBodyField(name, value))
		return err
	}
	for name, want := range map[string]string{
		"AMOUNT": "amount", "amount": "amount", "Amount": "amount", "currency": "currency", "CURRENCY": "currency",
		"Reference": "reference", "description": "description", "Transaction_Tags": "transaction_tags",
	} {
		err := initiate(name, "-5")
		var verr *payments.ValidationError
		require.ErrorAs(t, err, &verr, name)
		assert.ErrorIs(t, err, payments.ErrInvalidParams)
		assert.True(t, verr.Has("WithBodyField("+name+")"), "%s: %v", name, verr.Fields)
		assert.Contains(t, err.Error(), `the params' field "`+want+`"`)
		assert.NotContains(t, err.Error(), "-5", "the value is never repeated")
	}
	recipient := func(name string) error {
		_, err := h.client.Recipients.Create(context.Background(), validRecipientParams(), payments.WithBodyField(name, "1"))
		return err
	}
	for _, name := range []string{"ACCOUNT_NUMBER", "amount_limit", "Identification", "payment_details"} {
		assert.ErrorIs(t, recipient(name), payments.ErrInvalidParams, name)
	}
	// Client.Do: the body given is the params.
	_, err := h.client.Do(context.Background(), http.MethodPost, "/things", map[string]any{"amount": 1}, nil,
		payments.WithBodyField("Amount", -5))
	assert.ErrorIs(t, err, payments.ErrInvalidParams)
	assert.Zero(t, h.calls(), "nothing was sent")
}

// A body field changes the body only: named like a header the SDK owns, it
// goes in the body and the header stays the SDK's.
func TestWithBodyFieldCannotTouchTheSDKsHeaders(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(200, okEnvelope(confirmedPaymentJSON)))
	_, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "order-1042", QuoteID: quoteUUID},
		payments.WithIdempotencyKey("k-1"),
		payments.WithBodyField("Authorization", "Bearer stolen"),
		payments.WithBodyField("Content-Type", "text/plain"),
	)
	require.NoError(t, err)
	req := h.onlyRequest(t)
	assert.Equal(t, "k-1", req.Header.Get("Idempotency-Key"))
	assert.Equal(t, "Bearer "+harnessKey, req.Header.Get("Authorization"))
	assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
	assert.Equal(t, `{"reference":"order-1042","quote_id":"`+quoteUUID+`","Authorization":"Bearer stolen","Content-Type":"text/plain"}`, string(req.Body))

	for _, name := range []string{"Idempotency-Key", "idempotency_key", "IdempotencyKey"} {
		_, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "order-1042", QuoteID: quoteUUID},
			payments.WithBodyField(name, "another-key"))
		var verr *payments.ValidationError
		require.ErrorAs(t, err, &verr, name)
		assert.True(t, verr.Has("WithBodyField("+name+")"), "%v", verr.Fields)
	}
	assert.Len(t, h.requests(), 1, "nothing more was sent")
}

func TestWithBodyFieldRefusesWhatIsNotJSON(t *testing.T) {
	h := newHarness(t)
	for name, opts := range map[string][]payments.RequestOption{
		"invalid raw JSON": {payments.WithBodyField("extra", json.RawMessage(`{"a":`))},
		"NaN":              {payments.WithBodyField("extra", math.NaN())},
		"a func":           {payments.WithBodyField("extra", func() {})},
		"no name":          {payments.WithBodyField(" ", 1)},
	} {
		_, err := h.client.Recipients.Create(context.Background(), validRecipientParams(), opts...)
		var verr *payments.ValidationError
		require.ErrorAs(t, err, &verr, name)
		assert.NotContains(t, err.Error(), `{"a":`, "the value is never repeated")
	}
	// Client.Do: a GET has no body, and an array body has no fields.
	_, err := h.client.Do(context.Background(), http.MethodGet, "/webhooks/events", nil, nil, payments.WithBodyField("a", 1))
	assert.ErrorIs(t, err, payments.ErrInvalidParams)
	_, err = h.client.Do(context.Background(), http.MethodPost, "/things", []int{1}, nil, payments.WithBodyField("a", 1))
	assert.ErrorIs(t, err, payments.ErrInvalidParams)
	assert.Zero(t, h.calls(), "nothing was sent")
}

// A call without a body (Trigger) gets one holding the fields.
func TestWithBodyFieldMakesABody(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/payment.completed", jsonResponder(200, okEnvelope(`{"event":"payment.completed"}`)))
	_, err := h.client.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted, payments.WithBodyField("note", "a<b"))
	require.NoError(t, err)
	req := h.onlyRequest(t)
	assert.Equal(t, `{"note":"a\u003cb"}`, string(req.Body))
	assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
}

// TestDoSendsTheSDKsParamsWhole: the SDK's params given to Do go on the
// wire whole, personal data and exact amounts included, as their typed
// operations send them.
func TestDoSendsTheSDKsParamsWhole(t *testing.T) {
	params := payments.RecipientCreateParams{AccountNumber: "0123456789", AccountName: "Ada",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN"}
	amount := decimal.RequireFromString("10.5")
	for _, tc := range []struct {
		name   string
		params any
		want   string
	}{
		{"pointer", &params, `"account_number":"0123456789"`},
		{"value", params, `"account_number":"0123456789"`},
		{"initiate by value: the amount a number", payments.PaymentInitiateParams{RecipientID: "r1", Amount: payments.Amount{Decimal: amount}, Currency: "NGN"}, `"amount":10.5,`},
		{"nil pointer", (*payments.RecipientCreateParams)(nil), `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodPost, "/x", jsonResponder(201, okEnvelope(`{"id":"r1"}`)))
			_, err := h.client.Do(context.Background(), http.MethodPost, "/x", tc.params, nil,
				payments.WithIdempotencyKey("k-1"))
			require.NoError(t, err)
			req := h.onlyRequest(t)
			assert.Contains(t, string(req.Body), tc.want)
			assert.NotContains(t, string(req.Body), "****")
		})
	}
}

// TestDoSendsAStructEmbeddingParamsAsEncodingJSONWould: a merchant's struct
// that embeds an SDK params type goes on the wire exactly as encoding/json
// writes it, the merchant's own fields included (the SDK's params have no
// encoding method that an embedding struct would inherit).
func TestDoSendsAStructEmbeddingParamsAsEncodingJSONWould(t *testing.T) {
	type recipientWithNickname struct {
		payments.RecipientCreateParams
		Nickname string `json:"nickname"`
	}
	type paymentWithNarration struct {
		*payments.PaymentInitiateParams
		Narration string `json:"narration"`
	}
	recipient := recipientWithNickname{
		RecipientCreateParams: payments.RecipientCreateParams{AccountNumber: "0123456789", AccountName: "Ada Okafor",
			AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
			AmountLimit:    &payments.Amount{Decimal: decimal.RequireFromString("250000.75")},
			Identification: &payments.Identification{Type: payments.IdentificationPassport, Number: "A98765432Z"}},
		Nickname: "Ada at the market",
	}
	payment := paymentWithNarration{
		PaymentInitiateParams: &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: decimal.RequireFromString("15000.25")},
			Currency: "NGN", RecipientID: recipientUUID, Reference: "order-1042"},
		Narration: "March invoice",
	}
	for _, tc := range []struct {
		name, path string
		body       any
		want       string
	}{
		{"recipient by value", "/payments/recipients", recipient,
			`{"account_number":"0123456789","account_name":"Ada Okafor","account_type":"individual","account_currency":"NGN",` +
				`"amount_limit":250000.75,"identification":{"identification_type":"passport","identification_number":"A98765432Z"},` +
				`"nickname":"Ada at the market"}`},
		{"recipient by pointer", "/payments/recipients", &recipient, ""},
		{"payment, params by pointer", "/payments/initiate", payment,
			`{"amount":15000.25,"currency":"NGN","recipient_id":"` + recipientUUID + `","reference":"order-1042","narration":"March invoice"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodPost, tc.path, jsonResponder(200, okEnvelope(`{"id":"x"}`)))
			_, err := h.client.Do(context.Background(), http.MethodPost, tc.path, tc.body, nil, payments.WithIdempotencyKey("k-1"))
			require.NoError(t, err)
			sent := h.onlyRequest(t).Body
			want, err := json.Marshal(tc.body)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(sent), "the bytes encoding/json writes")
			if tc.want != "" {
				assert.Equal(t, tc.want, string(sent))
			}
		})
	}
}
