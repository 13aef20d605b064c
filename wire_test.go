package payments_test

import (
	"context"
	"net/http"
	"regexp"
	"runtime"
	"sort"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// uaPattern is the SDK's User-Agent: product, version, Go version, platform.
var uaPattern = regexp.MustCompile(`^payments-go/` + regexp.QuoteMeta(payments.Version) +
	` \(` + regexp.QuoteMeta(runtime.Version()) + `; ` + runtime.GOOS + `/` + runtime.GOARCH + `\)$`)

// headerNames returns the sorted names of h.
func headerNames(h http.Header) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// assertSDKHeaders checks the headers every request carries, and that no
// other header was sent. It returns the Idempotency-Key ("" when absent).
func assertSDKHeaders(t *testing.T, req sentRequest, withBody, withKey bool) string {
	t.Helper()
	want := []string{"Accept", "Authorization", "User-Agent"}
	if withBody {
		want = append(want, "Content-Type")
	}
	if withKey {
		want = append(want, "Idempotency-Key")
	}
	sort.Strings(want)
	assert.Equal(t, want, headerNames(req.Header))
	assert.Equal(t, []string{"Bearer " + harnessKey}, req.Header.Values("Authorization"))
	assert.Equal(t, []string{"application/json"}, req.Header.Values("Accept"))
	assert.Regexp(t, uaPattern, req.Header.Get("User-Agent"))
	if withBody {
		assert.Equal(t, []string{"application/json"}, req.Header.Values("Content-Type"))
	}
	return req.Header.Get("Idempotency-Key")
}

// assertRandomUUIDKey checks that key is a version-4 (random) UUID.
func assertRandomUUIDKey(t *testing.T, key string) {
	t.Helper()
	u, err := uuid.Parse(key)
	require.NoError(t, err, "Idempotency-Key %q", key)
	assert.Equal(t, uuid.Version(4), u.Version())
	assert.Equal(t, key, u.String(), "canonical lower-case form")
}

func mustDecimal(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func decimalPtr(s string) *decimal.Decimal { d := mustDecimal(s); return &d }

func TestWireRecipientsCreate(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))

	r, err := h.client.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber:      "0123456789",
		AccountName:        "Ada Okafor",
		AccountType:        payments.AccountTypeIndividual,
		AccountCurrency:    "NGN",
		AccountCountryCode: "NG",
		AccountBankName:    "First Bank",
		AccountBankCode:    "011",
		AmountLimit:        decimalPtr("1234567890.123456789"),
		Identification: &payments.Identification{
			Type:   payments.IdentificationPassport,
			Number: "A01234567",
			Image:  "aGVsbG8=",
		},
		PaymentDetails: &payments.PaymentDetails{
			AccountNumber: "0123456789",
			BankCode:      "011",
			BankName:      "First Bank",
			RoutingNumber: "021000021",
			SwiftCode:     "FBNINGLA",
			PaymentRails:  "nip",
		},
	})
	require.NoError(t, err)

	reqs := h.requests()
	require.Len(t, reqs, 1)
	req := reqs[0]
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/payments/recipients", req.Path)
	assert.Empty(t, req.RawQuery)
	key := assertSDKHeaders(t, req, true, true)
	assertRandomUUIDKey(t, key)
	assert.JSONEq(t, `{
		"account_number": "0123456789",
		"account_name": "Ada Okafor",
		"account_type": "individual",
		"account_currency": "NGN",
		"account_country_code": "NG",
		"account_bank_name": "First Bank",
		"account_bank_code": "011",
		"amount_limit": 1234567890.123456789,
		"identification": {
			"identification_type": "passport",
			"identification_number": "A01234567",
			"identification_image": "aGVsbG8="
		},
		"payment_details": {
			"account_number": "0123456789",
			"bank_code": "011",
			"bank_name": "First Bank",
			"routing_number": "021000021",
			"swift_code": "FBNINGLA",
			"payment_rails": "nip"
		}
	}`, string(req.Body))
	// JSONEq compares numbers as float64; the exact digits are checked on the bytes.
	assert.Contains(t, string(req.Body), `"amount_limit":1234567890.123456789}`)
	assert.NotContains(t, string(req.Body), `"amount_limit":"`)

	assert.Equal(t, key, r.LastResponse().IdempotencyKey, "the key used is reported on the result")
}

func TestWireRecipientsCreateMinimalOmitsOptionalFields(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	reqs := h.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, `{"account_number":"0123456789","account_name":"Ada Okafor","account_type":"individual","account_currency":"NGN"}`,
		string(reqs[0].Body))
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
			h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(paymentJSON)))
			_, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
				Amount: mustDecimal(s), Currency: "NGN", RecipientID: recipientUUID, Reference: "r-1",
			})
			require.NoError(t, err)
			reqs := h.requests()
			require.Len(t, reqs, 1)
			assert.Contains(t, string(reqs[0].Body), `{"amount":`+s+`,`)
		})
	}
}

func TestWireRecipientsUpdate(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPut, "/payments/recipients/"+recipientUUID, jsonResponder(200, okEnvelope(recipientJSON)))

	r, err := h.client.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{
		AccountName:          "Ada N. Okafor",
		AmountLimit:          decimalPtr("500000.25"),
		IdentificationType:   payments.IdentificationNationalID,
		IdentificationNumber: "12345678901",
		PaymentDetails:       &payments.PaymentDetails{SwiftCode: "FBNINGLA"},
	})
	require.NoError(t, err)
	assert.Equal(t, recipientUUID, r.ID)

	reqs := h.requests()
	require.Len(t, reqs, 1)
	req := reqs[0]
	assert.Equal(t, http.MethodPut, req.Method)
	assert.Equal(t, "/payments/recipients/"+recipientUUID, req.Path)
	assert.Empty(t, assertSDKHeaders(t, req, true, false), "edit carries no Idempotency-Key of its own")
	// Identification is flat on edit; unset fields are left out.
	assert.JSONEq(t, `{
		"account_name": "Ada N. Okafor",
		"amount_limit": 500000.25,
		"identification_type": "national_id",
		"identification_number": "12345678901",
		"payment_details": {"swift_code": "FBNINGLA"}
	}`, string(req.Body))
	assert.Contains(t, string(req.Body), `"amount_limit":500000.25`)
	assert.Empty(t, r.LastResponse().IdempotencyKey)
}

func TestWireRecipientsUpdateWithCallerKey(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPut, "/payments/recipients/"+recipientUUID, jsonResponder(200, okEnvelope(recipientJSON)))
	r, err := h.client.Recipients.Update(context.Background(), recipientUUID,
		&payments.RecipientUpdateParams{AccountName: "X"}, payments.WithIdempotencyKey("edit-7"))
	require.NoError(t, err)
	reqs := h.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "edit-7", assertSDKHeaders(t, reqs[0], true, true))
	assert.Equal(t, "edit-7", r.LastResponse().IdempotencyKey)
}

func TestWirePaymentsInitiate(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(paymentJSON)))

	p, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount:              mustDecimal("1234567890.123456789"),
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

	reqs := h.requests()
	require.Len(t, reqs, 1)
	req := reqs[0]
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/payments/initiate", req.Path)
	key := assertSDKHeaders(t, req, true, true)
	assertRandomUUIDKey(t, key)
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
		Amount: mustDecimal("15000.50"), Currency: "NGN", RecipientID: recipientUUID, Reference: "order-1042",
	})
	require.NoError(t, err)
	reqs := h.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, `{"amount":15000.5,"currency":"NGN","recipient_id":"`+recipientUUID+`","reference":"order-1042"}`,
		string(reqs[0].Body))
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

	reqs := h.requests()
	require.Len(t, reqs, 1)
	req := reqs[0]
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/payments/confirm", req.Path)
	key := assertSDKHeaders(t, req, true, true)
	assertRandomUUIDKey(t, key)
	assert.Equal(t, `{"reference":"order-1042","quote_id":"`+quoteUUID+`"}`, string(req.Body))
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
	assert.Equal(t, "9900112233", va.AccountNumber)
	assert.True(t, va.IsActive)

	reqs := h.requests()
	require.Len(t, reqs, 1)
	req := reqs[0]
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
	reqs := h.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, `{"account_type":"business","account_name":"Acme Stores","email":"ops@acme.example"}`, string(reqs[0].Body))
}

func TestWireWebhooksTrigger(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/payment.completed",
		jsonResponder(200, `{"success":true,"message":"Test event sent","stan":"`+stanUUID+`"}`))

	res, err := h.client.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
	require.NoError(t, err)
	assert.Equal(t, payments.EventPaymentCompleted, res.EventType)
	assert.Nil(t, res.Data)
	require.NotNil(t, res.LastResponse())
	assert.Equal(t, "Test event sent", res.LastResponse().Message)
	assert.Equal(t, stanUUID, res.LastResponse().Stan)

	reqs := h.requests()
	require.Len(t, reqs, 1)
	req := reqs[0]
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/webhooks/events/trigger/payment.completed", req.Path)
	assert.False(t, req.HasBody)
	assert.Empty(t, assertSDKHeaders(t, req, false, false))
}

func TestWireWebhooksTriggerKeepsData(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/recipient.verified",
		jsonResponder(200, okEnvelope(`{"delivery_id":"d-1","queued":true}`)))
	res, err := h.client.Webhooks.Trigger(context.Background(), payments.EventRecipientVerified)
	require.NoError(t, err)
	assert.JSONEq(t, `{"delivery_id":"d-1","queued":true}`, string(res.Data))
	assert.JSONEq(t, `{"delivery_id":"d-1","queued":true}`, string(res.RawJSON()))
}

func TestWireWebhooksTriggerNoContent(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/payment.failed", typedResponder(http.StatusNoContent, "", ""))
	res, err := h.client.Webhooks.Trigger(context.Background(), payments.EventPaymentFailed)
	require.NoError(t, err)
	assert.Nil(t, res.Data)
	assert.Equal(t, http.StatusNoContent, res.LastResponse().StatusCode)
}

func TestWirePathParametersAreEscaped(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/webhooks/events/trigger/a%2Fb%3Fc=d%23e", jsonResponder(200, `{"success":true}`))
	h.on(http.MethodPost, "/webhooks/events/trigger/..%2Fadmin", jsonResponder(200, `{"success":true}`))
	h.on(http.MethodPost, "/webhooks/events/trigger/brand.new_kind", jsonResponder(200, `{"success":true}`))

	for _, ev := range []payments.EventType{"a/b?c=d#e", "../admin", "brand.new_kind"} {
		_, err := h.client.Webhooks.Trigger(context.Background(), ev)
		require.NoError(t, err, ev)
	}
	reqs := h.requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "/webhooks/events/trigger/a%2Fb%3Fc=d%23e", reqs[0].Path)
	assert.Empty(t, reqs[0].RawQuery)
	assert.Equal(t, "/webhooks/events/trigger/..%2Fadmin", reqs[1].Path)
	assert.Equal(t, "/webhooks/events/trigger/brand.new_kind", reqs[2].Path, "unknown event names are sent as given")
}

func TestWireCallerKeyAndExtraHeader(t *testing.T) {
	h := newHarness(t, payments.WithUserAgent("acme-checkout/2.3"))
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(paymentJSON)))
	p, err := h.client.Payments.Initiate(context.Background(), &payments.PaymentInitiateParams{
		Amount: mustDecimal("10"), Currency: "NGN", RecipientID: recipientUUID, Reference: "order-9",
	}, payments.WithIdempotencyKey("order-9-initiate"), payments.WithHeader("X-Request-Id", "req-123"))
	require.NoError(t, err)
	reqs := h.requests()
	require.Len(t, reqs, 1)
	hdr := reqs[0].Header
	assert.Equal(t, []string{"order-9-initiate"}, hdr.Values("Idempotency-Key"))
	assert.Equal(t, []string{"req-123"}, hdr.Values("X-Request-Id"))
	assert.Regexp(t, `^acme-checkout/2\.3 payments-go/`+regexp.QuoteMeta(payments.Version)+` \(go`, hdr.Get("User-Agent"))
	assert.Equal(t, "order-9-initiate", p.LastResponse().IdempotencyKey)
}

func TestWireEachCallGetsItsOwnKey(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
		require.NoError(t, err)
	}
	for _, r := range h.requests() {
		k := r.Header.Get("Idempotency-Key")
		assertRandomUUIDKey(t, k)
		seen[k] = true
	}
	assert.Len(t, seen, 5)
}
