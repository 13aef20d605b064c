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

const virtualAccountJSON = `{
	"id": "` + vaUUID + `",
	"currency": "NGN",
	"account_number": "9900112233",
	"account_name": "Acme Stores",
	"bank_name": "Wema Bank",
	"is_active": true,
	"created_at": "2025-03-01T10:00:00Z"
}`

func validVirtualAccountParams() *payments.VirtualAccountCreateParams {
	return &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual, AccountName: "Ada Okafor", Email: "ada@example.com",
		FirstName: "Ada", LastName: "Okafor",
	}
}

func TestWireVirtualAccountsCreate(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/accounts/virtual-accounts", jsonResponder(200, okEnvelope(virtualAccountJSON)))

	va, err := h.client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType:  payments.AccountTypeIndividual,
		AccountName:  "Ada Okafor",
		Email:        "ada@example.com",
		FirstName:    "Ada",
		LastName:     "Okafor",
		DisplayName:  "Ada O.",
		BVN:          "12345678901",
		MobileNumber: "+2348012345678",
		Metadata: &payments.VirtualAccountMetadata{
			BusinessRegNumber: "RC123456",
			Country:           "NG",
			UseCase:           "collections",
			Reference:         "cust-77",
		},
	})
	require.NoError(t, err)
	assert.Equal(t, vaUUID, va.ID)
	assert.Equal(t, "9900112233", string(va.AccountNumber))
	assert.True(t, va.IsActive)

	req := h.onlyRequest(t)
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/accounts/virtual-accounts", req.Path)
	assert.Empty(t, assertSDKHeaders(t, req, true, false), "the spec gives this operation no Idempotency-Key")
	assert.JSONEq(t, `{
		"account_type": "individual",
		"account_name": "Ada Okafor",
		"email": "ada@example.com",
		"first_name": "Ada",
		"last_name": "Okafor",
		"display_name": "Ada O.",
		"bvn": "12345678901",
		"mobile_number": "+2348012345678",
		"metadata": {
			"business_reg_number": "RC123456",
			"country": "NG",
			"use_case": "collections",
			"reference": "cust-77"
		}
	}`, string(req.Body))
}

func TestWireVirtualAccountsCreateBusinessMinimal(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/accounts/virtual-accounts", jsonResponder(200, okEnvelope(virtualAccountJSON)))
	_, err := h.client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme Stores", Email: "ops@acme.example",
	})
	require.NoError(t, err)
	req := h.onlyRequest(t)
	assert.Equal(t, `{"account_type":"business","account_name":"Acme Stores","email":"ops@acme.example"}`, string(req.Body))
}

func TestVirtualAccountPersonalDataNeverPrinted(t *testing.T) {
	assertNeverPrinted(t, map[string]any{
		"VirtualAccountCreateParams": payments.VirtualAccountCreateParams{AccountType: payments.AccountTypeIndividual,
			AccountName: "Ada", Email: pdEmail, BVN: pdBVN, MobileNumber: pdMobile,
			Metadata: &payments.VirtualAccountMetadata{Country: "NG"}},
		"VirtualAccount": &payments.VirtualAccount{ID: "va-1", AccountNumber: pdAccount},
	})
}

// FuzzDecodeVirtualAccount decodes arbitrary JSON as a VirtualAccount: no
// panic and a lossless round trip.
func FuzzDecodeVirtualAccount(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fzDecodeLossless[payments.VirtualAccount](t, data)
	})
}

// TestVirtualAccountPaymentFieldVariantsOnlyInTheSDKsDecoding: the field name
// variants (transaction_id, narration, a sender object) are read where the
// SDK decodes, an event or a response to Do; a caller's json.Unmarshal is
// plain encoding/json of the fields.
func TestVirtualAccountPaymentFieldVariantsOnlyInTheSDKsDecoding(t *testing.T) {
	data := `{"transaction_id":"t-1","amount":"5000.00","currency":"NGN","narration":"rent",
		"sender":{"name":"Ada","account_number":"0123456789"}}`
	h := newHarness(t)
	h.on(http.MethodGet, "/incoming/t-1", jsonResponder(200, okEnvelope(data)))
	var vp payments.VirtualAccountPayment
	_, err := h.client.Do(context.Background(), http.MethodGet, "/incoming/t-1", nil, &vp)
	require.NoError(t, err)
	assert.Equal(t, "t-1", vp.ID)
	assert.Equal(t, "rent", vp.Description)
	assert.Equal(t, "Ada", vp.Payer.Name)
	assert.Equal(t, payments.AccountNumber("0123456789"), vp.Payer.AccountNumber)
	assert.True(t, vp.Amount.Equal(mustDecimal("5000")))
	assert.Equal(t, data, string(vp.RawJSON()))

	h.on(http.MethodGet, "/incoming/t-2", jsonResponder(200, okEnvelope(`{"transaction_id":"t-2"}`)))
	_, err = h.client.Do(context.Background(), http.MethodGet, "/incoming/t-2", nil, &vp)
	var merr *payments.MalformedResponseError
	require.ErrorAs(t, err, &merr, "money is never guessed")

	var plain payments.VirtualAccountPayment
	require.NoError(t, json.Unmarshal([]byte(data), &plain))
	assert.Empty(t, plain.ID, "plain decoding reads no variant")
	assert.Empty(t, plain.Payer.Name)
	assert.True(t, plain.Amount.Equal(mustDecimal("5000")), "Amount is a field name")
}
