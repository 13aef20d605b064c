package payments_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// quoteCase is an initiate answer's data built from paymentJSON's payment
// (15000.50 NGN, what validInitiateParams sends) with replacements.
func quoteCase(replace ...string) string {
	return strings.NewReplacer(replace...).Replace(paymentJSON)
}

// flatQuote is paymentJSON's payment with its quote flat in data.
const flatQuote = `{"id":"` + paymentUUID + `","reference":"order-1042","status":"pending","amount":"15000.50","currency":"NGN",
	"quote_id":"` + quoteUUID + `","fee":"25.00","exchange_rate":"1","total_amount":"15025.50"}`

// TestInitiateQuoteNeverZero: a quote Initiate cannot read whole, where
// docs/assumptions.md puts it, is a *MalformedResponseError naming each
// member missing and where it was looked for: never a zero (the issue's
// case: fee and total named fee_amount and total).
func TestInitiateQuoteNeverZero(t *testing.T) {
	for name, tc := range map[string]struct{ data, reason string }{
		"fee and total under other names": {quoteCase(`"fee":`, `"fee_amount":`, `"total_amount":`, `"total":`),
			"it has no fee (data.quote.fee), no total_amount (data.quote.total_amount)"},
		"fee null":            {quoteCase(`"fee": "25.00"`, `"fee": null`), "it has no fee (data.quote.fee)"},
		"no exchange rate":    {quoteCase(`"exchange_rate": "1",`, ``), "it has no exchange_rate (data.quote.exchange_rate)"},
		"exchange rate 0":     {quoteCase(`"exchange_rate": "1"`, `"exchange_rate": "0"`), "exchange_rate (data.quote.exchange_rate) is 0, not a rate"},
		"total 0":             {quoteCase(`"total_amount": "15025.50"`, `"total_amount": 0`), "total_amount (data.quote.total_amount) is 0, not an amount to collect"},
		"no quote id":         {quoteCase(`"quote_id"`, `"id"`), "it has no quote_id (data.quote.quote_id)"},
		"no currency":         {quoteCase(`"currency": "NGN",`, ``), "it has no currency (data.quote.currency or data.currency)"},
		"no amount at all":    {quoteCase(`"amount": "15000.50",`, ``), "data has no amount (data.amount is absent or null)"},
		"payment amount null": {quoteCase(`"amount": "15000.50",`+"\n\t\"currency\"", `"amount": null, "currency"`), "data has no amount (data.amount is absent or null)"},
		"flat, no fee":        {strings.Replace(flatQuote, `"fee":"25.00",`, ``, 1), "it has no fee (data.fee)"},
		"flat, no quote id":   {strings.Replace(flatQuote, `"quote_id":"`+quoteUUID+`",`, ``, 1), "it has no quote_id (data.quote_id)"},
		"no quote":            {confirmedPaymentJSON, "carries no quote (no quote id: looked for data.quote.quote_id and data.quote_id)"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			data := tc.data
			if name == "no quote" {
				data = strings.Replace(data, `"completed"`, `"pending"`, 1)
			}
			require.NotEqual(t, paymentJSON, data, "the case changes the answer")
			h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(data)))
			p, err := h.client.Payments.Initiate(context.Background(), validInitiateParams())
			assert.Nil(t, p)
			var merr *payments.MalformedResponseError
			require.ErrorAs(t, err, &merr)
			assert.ErrorIs(t, err, payments.ErrMalformedResponse)
			assert.Contains(t, merr.Reason, tc.reason)
			if name != "no amount at all" && name != "payment amount null" {
				assert.Contains(t, merr.Reason, "do not confirm it", "it says what to do")
			}
			key, ok := payments.IdempotencyKeyOf(err)
			assert.True(t, ok)
			assert.Equal(t, h.onlyRequest(t).Header.Get("Idempotency-Key"), key)
		})
	}
}

// TestInitiateQuoteWholeAndZeroFee: a zero fee the service sends is a fee;
// the flat shape reads whole too.
func TestInitiateQuoteWholeAndZeroFee(t *testing.T) {
	p, err := initiateAnswering(t, quoteCase(`"fee": "25.00"`, `"fee": "0"`))
	require.NoError(t, err)
	assert.True(t, p.Quote.Fee.IsZero())
	p, err = initiateAnswering(t, flatQuote)
	require.NoError(t, err)
	assert.Equal(t, "25", p.Quote.Fee.String())
	assert.Equal(t, "15025.5", p.Quote.TotalAmount.String())
}

// TestInitiateAmountDisagrees: an answer whose amount or currency, the
// payment's or the quote's, is not the one sent is a
// *MalformedResponseError naming both amounts, unmasked (an amount of 8
// digits or more would be masked as an account number otherwise).
func TestInitiateAmountDisagrees(t *testing.T) {
	for name, tc := range map[string]struct {
		sent    string
		replace []string
		reasons []string
	}{
		"minor units": {"123456789.12", []string{`"15000.50"`, `"12345678912"`}, []string{
			"the answer disagrees with the 123456789.12 NGN sent",
			"the payment's amount (data.amount) is 12345678912 (100 times the amount sent: the service may count in minor units)",
			"the quote's amount (data.quote.amount) is 12345678912 (100 times",
			"do not confirm this quote"}},
		"only the quote's amount": {"15000.50", []string{`"amount": "15000.50",` + "\n\t\t\"fee\"", `"amount": "15001", "fee"`}, []string{
			"the quote's amount (data.quote.amount) is 15001"}},
		"quote currency": {"15000.50", []string{`"currency": "NGN",` + "\n\t\t\"expires_at\"", `"currency": "USD", "expires_at"`}, []string{
			"the answer disagrees with the 15000.5 NGN sent: the quote's currency (data.quote.currency) is USD"}},
		"payment currency": {"15000.50", []string{`"currency": "NGN",` + "\n\t\"description\"", `"currency": "GHS", "description"`}, []string{
			"the payment's currency (data.currency) is GHS"}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			data := quoteCase(tc.replace...)
			require.NotEqual(t, paymentJSON, data, "the case changes the answer")
			h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(data)))
			params := validInitiateParams()
			params.Amount = payments.Amount{Decimal: mustDecimal(tc.sent)}
			p, err := h.client.Payments.Initiate(context.Background(), params)
			assert.Nil(t, p)
			var merr *payments.MalformedResponseError
			require.ErrorAs(t, err, &merr)
			for _, r := range tc.reasons {
				assert.Contains(t, merr.Reason, r)
				assert.Contains(t, err.Error(), r)
			}
			assert.Equal(t, okEnvelope(data), string(merr.Response.Body), "the answer is kept")
		})
	}
}

// TestInitiateAmountAgreesByValue: 15000.5 and 15000.50 are one amount, ngn
// and NGN one currency.
func TestInitiateAmountAgreesByValue(t *testing.T) {
	p, err := initiateAnswering(t, quoteCase(`"15000.50"`, `15000.5000`, `"NGN"`, `"ngn"`))
	require.NoError(t, err)
	assert.Equal(t, "15000.5", p.Quote.Amount.String())
}

// TestConfirmNeverZero: a confirmed payment without an amount is an
// unknown outcome, never a zero; a quote it echoes incomplete is left out
// (nil), never zeros.
func TestConfirmNeverZero(t *testing.T) {
	for name, data := range map[string]string{
		"absent": strings.Replace(confirmedPaymentJSON, `"amount": "15000.50",`, ``, 1),
		"null":   strings.Replace(confirmedPaymentJSON, `"amount": "15000.50",`, `"amount": null,`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			require.NotEqual(t, confirmedPaymentJSON, data)
			h := newHarness(t)
			h.on(http.MethodPost, "/payments/confirm", jsonResponder(200, okEnvelope(data)))
			p, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
			assert.Nil(t, p)
			var merr *payments.MalformedResponseError
			require.ErrorAs(t, err, &merr)
			assert.Contains(t, merr.Reason, "data has no amount (data.amount is absent or null)")
		})
	}
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(200, okEnvelope(
		strings.Replace(confirmedPaymentJSON, `"is_completed": true,`, `"is_completed": true, "quote": {"quote_id": "q", "fee": "1"},`, 1))))
	p, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
	require.NoError(t, err)
	assert.Nil(t, p.Quote, "an incomplete quote is no quote")
}

// TestEventPaymentNeverZero: a payment event's data without an amount does
// not decode (ErrInvalidEventData); an incomplete quote in it is nil.
func TestEventPaymentNeverZero(t *testing.T) {
	for name, data := range map[string]string{
		"absent": `{"id":"p1","reference":"r","status":"completed","currency":"NGN"}`,
		"null":   `{"id":"p1","reference":"r","status":"completed","amount":null,"currency":"NGN"}`,
	} {
		t.Run(name, func(t *testing.T) {
			ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventPaymentCompleted, data))
			require.NoError(t, err)
			p, err := ev.Payment()
			assert.Nil(t, p)
			require.ErrorIs(t, err, payments.ErrInvalidEventData)
			assert.Contains(t, err.Error(), "data has no amount (data.amount is absent or null)")
		})
	}
	ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventPaymentCompleted,
		`{"id":"p1","reference":"r","status":"completed","amount":"5","currency":"NGN","quote_id":"q","fee":"1"}`))
	require.NoError(t, err)
	p, err := ev.Payment()
	require.NoError(t, err)
	assert.Equal(t, "5", p.Amount.String())
	assert.Nil(t, p.Quote, "a quote without exchange_rate and total_amount is no quote")
}
