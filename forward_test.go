package payments_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

func TestUnknownEnumValuesPassThrough(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(200, okEnvelope(
		`{"id":"p","reference":"r","status":"settled_partially","amount":"1","currency":"NGN"}`)))
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(
		`{"id":"`+recipientUUID+`","account_type":"sole_trader","identification":{"identification_type":"voters_card"}}`)))

	p, err := h.client.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatus("settled_partially"), p.Status)

	r, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	assert.Equal(t, payments.AccountType("sole_trader"), r.AccountType)
	assert.False(t, r.AccountType.Known())
	assert.Equal(t, payments.IdentificationType("voters_card"), r.Identification.Type)
}

func TestUnknownFieldsAreKeptInRawJSON(t *testing.T) {
	data := `{"id":"` + vaUUID + `","currency":"NGN","account_number":"9900112233","is_active":true,
		"provider":{"name":"wema","tier":2},"expires_on":"2026-01-01","labels":["a","b"]}`
	h := newHarness(t)
	h.on(http.MethodPost, "/accounts/virtual-accounts", jsonResponder(200,
		`{"success":true,"message":"Created","stan":"`+stanUUID+`","data":`+data+`,"request_cost":3,"trace":{"region":"eu"}}`))

	va, err := h.client.VirtualAccounts.Create(context.Background(), validVirtualAccountParams())
	require.NoError(t, err)
	assert.Equal(t, vaUUID, va.ID)
	assert.JSONEq(t, data, string(va.RawJSON()))
	assert.Equal(t, data, string(va.RawJSON()), "byte for byte as received")
	assert.JSONEq(t, data, string(va.LastResponse().RawData))

	var extra struct {
		Provider struct {
			Name string `json:"name"`
			Tier int    `json:"tier"`
		} `json:"provider"`
	}
	require.NoError(t, json.Unmarshal(va.RawJSON(), &extra))
	assert.Equal(t, "wema", extra.Provider.Name)
}

func TestPaymentRawJSONKeepsUnknownFieldsAndQuote(t *testing.T) {
	data := `{"id":"p","reference":"r","amount":"1","currency":"NGN","risk_score":0.2,
		"quote":{"quote_id":"q","fee":"0","fx_provider":"acme"}}`
	p, err := initiateAnswering(t, data)
	require.NoError(t, err)
	assert.Equal(t, data, string(p.RawJSON()))
	assert.Equal(t, "q", p.Quote.ID)
}

func TestLastResponse(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", sequence(
		jsonResponder(503, errorEnvelope("busy")),
		withHeader(jsonResponder(201, `{"success":true,"message":"Recipient created","stan":"`+stanUUID+`","data":`+recipientJSON+`}`),
			"X-Request-Id", "rid-9"),
	))
	r, err := h.client.Recipients.Create(context.Background(), validRecipientParams(), payments.WithIdempotencyKey("rcp-1"))
	require.NoError(t, err)
	resp := r.LastResponse()
	require.NotNil(t, resp)
	assert.Equal(t, stanUUID, resp.Stan)
	assert.Equal(t, "Recipient created", resp.Message)
	assert.Equal(t, 201, resp.StatusCode)
	assert.Equal(t, "rid-9", resp.Header.Get("X-Request-Id"))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, 2, resp.Attempts)
	assert.Equal(t, "rcp-1", resp.IdempotencyKey)
	assert.JSONEq(t, recipientJSON, string(resp.RawData))
}

func TestResourcesNotFromTheAPIHaveNoResponse(t *testing.T) {
	var r payments.Recipient
	require.NoError(t, json.Unmarshal([]byte(recipientJSON), &r))
	assert.Nil(t, r.LastResponse())
	assert.Equal(t, recipientUUID, r.ID)
}

func TestSuccessWithoutSuccessFlagIsAccepted(t *testing.T) {
	// An envelope that leaves out "success" but carries data is taken as a success.
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, `{"message":"ok","stan":"s","data":`+recipientJSON+`}`))
	r, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	assert.Equal(t, recipientUUID, r.ID)
}

func TestLimitAsNumberOrStringOrNull(t *testing.T) {
	for body, want := range map[string]string{
		`"250000.75"`:            "250000.75",
		`250000.75`:              "250000.75",
		`"1234567890.123456789"`: "1234567890.123456789",
		`1234567890.123456789`:   "1234567890.123456789",
		`null`:                   "",
	} {
		t.Run(body, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(`{"id":"x","limit":`+body+`}`)))
			r, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
			require.NoError(t, err)
			if want == "" {
				assert.Nil(t, r.Limit)
				return
			}
			require.NotNil(t, r.Limit)
			assert.Equal(t, want, r.Limit.String())
		})
	}
}
