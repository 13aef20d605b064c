package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

const recipientJSON = `{
	"id": "` + recipientUUID + `",
	"merchant_id": "` + merchantUUID + `",
	"account_number": "0123456789",
	"account_name": "Ada Okafor",
	"account_type": "individual",
	"is_internal_account": false,
	"account_currency": "NGN",
	"account_bank_name": "First Bank",
	"account_bank_code": "011",
	"account_country_code": "NG",
	"account_country": "Nigeria",
	"identification": {"identification_type": "passport"},
	"limit": "250000.00",
	"payment_details": {"swift_code": "FBNINGLA"},
	"created_at": "2025-03-01T10:00:00Z",
	"updated_at": "2025-03-01T10:05:00Z"
}`

func validRecipientParams() *payments.RecipientCreateParams {
	return &payments.RecipientCreateParams{
		AccountNumber:   "0123456789",
		AccountName:     "Ada Okafor",
		AccountType:     payments.AccountTypeIndividual,
		AccountCurrency: "NGN",
	}
}

// The personal data and secrets planted in the values below; none may be
// printed or logged.
const (
	pdAccount  = "0123456789"
	pdIDNumber = "A98765432Z"
	pdImage    = "aW1hZ2UtYnl0ZXMtb2YtYS1wYXNzcG9ydA=="
	pdBVN      = "22233344455"
	pdEmail    = "ada@merchant.example"
	pdMobile   = "+2348012345678"
)

func TestWireRecipientsCreate(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", echoRecipient(201))

	r, err := h.client.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber:      "0123456789",
		AccountName:        "Ada Okafor",
		AccountType:        payments.AccountTypeIndividual,
		AccountCurrency:    "NGN",
		AccountCountryCode: "NG",
		AccountBankName:    "First Bank",
		AccountBankCode:    "011",
		AmountLimit:        amountPtr("1234567890.123456789"),
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

	req := h.onlyRequest(t)
	key := assertKeyedPost(t, req, "/payments/recipients")
	assert.Empty(t, req.RawQuery)
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
	assert.Contains(t, string(req.Body), `"amount_limit":1234567890.123456789,`)
	assert.NotContains(t, string(req.Body), `"amount_limit":"`)

	assert.Equal(t, key, r.LastResponse().IdempotencyKey, "the key used is reported on the result")
}

func TestWireRecipientsCreateMinimalOmitsOptionalFields(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	req := h.onlyRequest(t)
	assert.Equal(t, `{"account_number":"0123456789","account_name":"Ada Okafor","account_type":"individual","account_currency":"NGN"}`,
		string(req.Body))
}

func TestWireRecipientsUpdate(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPut, "/payments/recipients/"+recipientUUID, echoRecipient(200))

	r, err := h.client.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{
		AccountName:          "Ada N. Okafor",
		AmountLimit:          amountPtr("500000.25"),
		IdentificationType:   payments.IdentificationNationalID,
		IdentificationNumber: "12345678901",
		PaymentDetails:       &payments.PaymentDetails{SwiftCode: "FBNINGLA"},
	})
	require.NoError(t, err)
	assert.Equal(t, recipientUUID, r.ID)

	req := h.onlyRequest(t)
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
	req := h.onlyRequest(t)
	assert.Equal(t, "edit-7", assertSDKHeaders(t, req, true, true))
	assert.Equal(t, "edit-7", r.LastResponse().IdempotencyKey)
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

// assertNeverPrinted checks that no planted personal data shows in any
// printed or logged form of the values.
func assertNeverPrinted(t *testing.T, values map[string]any) {
	t.Helper()
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			for how, s := range printedForms(t, v) {
				for _, secret := range []string{pdAccount, pdIDNumber, pdImage, pdBVN, pdEmail, pdMobile} {
					assert.NotContains(t, s, secret, "%s printed with %s", name, how)
				}
			}
		})
	}
}

func TestRecipientPersonalDataNeverPrinted(t *testing.T) {
	limit := payments.Amount{Decimal: decimal.RequireFromString("5000")}
	id := &payments.Identification{Type: payments.IdentificationPassport, Number: pdIDNumber, Image: pdImage}
	details := &payments.PaymentDetails{AccountNumber: pdAccount, BankCode: "058"}
	values := map[string]any{
		"Identification": *id,
		"PaymentDetails": *details,
		"RecipientCreateParams": &payments.RecipientCreateParams{AccountNumber: pdAccount, AccountName: "Ada",
			AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN", AmountLimit: &limit,
			Identification: id, PaymentDetails: details},
		"RecipientUpdateParams": payments.RecipientUpdateParams{AccountNumber: pdAccount,
			IdentificationType: payments.IdentificationPassport, IdentificationNumber: pdIDNumber, PaymentDetails: details},
		"Recipient": &payments.Recipient{ID: "r-1", AccountNumber: pdAccount, Identification: id, PaymentDetails: details},
	}
	assertNeverPrinted(t, values)
	assert.Contains(t, fmt.Sprint(values["Recipient"]), "****6789", "the last four digits tell accounts apart")
	assert.Contains(t, fmt.Sprint(values["RecipientCreateParams"]), "AccountName:Ada", "the rest is printed")
}

func TestPersonalDataHiddenWhenPrinted(t *testing.T) {
	id := payments.Identification{Type: payments.IdentificationNationalID, Number: "NIN-12345678", Image: "aGVsbG8="}
	va := payments.VirtualAccountCreateParams{AccountType: payments.AccountTypeIndividual, AccountName: "Ada", BVN: "12345678901"}
	up := payments.RecipientUpdateParams{IdentificationNumber: "NIN-12345678"}
	for _, s := range []string{
		sprintAll(id), sprintAll(&id), sprintAll(va), sprintAll(&va), sprintAll(up),
		logged(id), logged(va), logged(&va), logged(up),
	} {
		assert.NotContains(t, s, "12345678")
		assert.NotContains(t, s, "aGVsbG8=")
	}
	assert.Contains(t, fmt.Sprint(id), "national_id")
}

// encoding/json keeps the personal data of the SDK's values whole (a
// merchant stores or queues them as JSON), the request carries it whole,
// and only their printed and logged forms mask it.
func TestPersonalDataWholeInJSONMaskedInText(t *testing.T) {
	params := validRecipientParams()
	params.Identification = &payments.Identification{Type: payments.IdentificationPassport, Number: pdIDNumber, Image: pdImage}
	params.PaymentDetails = &payments.PaymentDetails{AccountNumber: pdAccount, BankCode: "058"}
	vaParams := payments.VirtualAccountCreateParams{AccountType: payments.AccountTypeIndividual, AccountName: "Ada",
		Email: pdEmail, BVN: pdBVN, MobileNumber: pdMobile}
	recipient := payments.Recipient{AccountNumber: pdAccount, Identification: params.Identification}
	for _, tc := range []struct {
		v       any
		secrets []string
	}{
		{params, []string{string(params.AccountNumber), pdIDNumber, pdImage, pdAccount}},
		{vaParams, []string{pdBVN, pdEmail, pdMobile}},
		{recipient, []string{pdAccount, pdIDNumber, pdImage}},
	} {
		v, secrets := tc.v, tc.secrets
		b, err := json.Marshal(v)
		require.NoError(t, err)
		printed := sprintAll(v) + logged(v)
		for _, secret := range secrets {
			assert.Contains(t, string(b), `"`+secret+`"`, "%T: encoding/json keeps it whole", v)
			assert.NotContains(t, printed, secret, "%T: printed and logged masked", v)
		}
		assert.NotContains(t, string(b), `[redacted]`, "%T", v)
		assert.NotContains(t, string(b), `****`, "%T", v)
	}

	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	_, err := h.client.Recipients.Create(context.Background(), params)
	require.NoError(t, err)
	sent := h.onlyRequest(t).Body
	want, err := json.Marshal(params)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(sent), "the request is the params as encoding/json writes them")
}

// logged is v as slog's text and JSON handlers log it, without the time.
func logged(v any) string {
	var b bytes.Buffer
	noTime := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}}
	slog.New(slog.NewTextHandler(&b, noTime)).Info("value", "v", v)
	slog.New(slog.NewJSONHandler(&b, noTime)).Info("value", "v", v)
	return b.String()
}

func sprintAll(v any) string {
	var b strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		b.WriteString(fmt.Sprintf(verb, v))
		b.WriteString("|")
	}
	return b.String()
}

// FuzzDecodeRecipient decodes arbitrary JSON as a Recipient: no panic, a
// lossless round trip, and the printed identification never depends on the
// number or image it hides.
func FuzzDecodeRecipient(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := fzDecodeLossless[payments.Recipient](t, data)
		if !ok {
			return
		}
		if id := r.Identification; id != nil {
			other := *id
			if other.Number != "" {
				other.Number = "other-number"
			}
			if other.Image != "" {
				other.Image = "b3RoZXI="
			}
			if sprintAll(id) != sprintAll(&other) || logged(id) != logged(&other) {
				t.Fatalf("the printed identification shows its number or image: %v", id)
			}
		}
	})
}

// TestRecipientLimitNeverZero: a limit the service leaves out or sends as
// null is no limit (nil), never a limit of zero (shopspring/decimal alone
// decodes null to zero); in a response and in an event alike.
func TestRecipientLimitNeverZero(t *testing.T) {
	for name, data := range map[string]string{
		"absent": strings.Replace(recipientJSON, `"limit": "250000.00",`, ``, 1),
		"null":   strings.Replace(recipientJSON, `"limit": "250000.00",`, `"limit": null,`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			require.NotEqual(t, recipientJSON, data)
			h := newHarness(t)
			h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(data)))
			r, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
			require.NoError(t, err)
			assert.Nil(t, r.Limit)

			ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventRecipientCreated, data))
			require.NoError(t, err)
			r, err = ev.Recipient()
			require.NoError(t, err)
			assert.Nil(t, r.Limit)
		})
	}
}
