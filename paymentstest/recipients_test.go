package paymentstest_test

import (
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func TestCreateRecipient(t *testing.T) {
	srv, c := start(t)
	limit := payments.Amount{Decimal: dec("5000.50")}
	image := base64.StdEncoding.EncodeToString([]byte("passport scan"))
	r, err := c.Recipients.Create(ctx(t), &payments.RecipientCreateParams{
		AccountNumber:      "0123456789",
		AccountName:        "Ada Lovelace",
		AccountType:        payments.AccountTypeBusiness,
		AccountCurrency:    "NGN",
		AccountCountryCode: "Nigeria",
		AccountBankName:    "Sandbox Bank",
		AccountBankCode:    "058",
		AmountLimit:        &limit,
		Identification:     &payments.Identification{Type: payments.IdentificationPassport, Number: "A1234567", Image: payments.PersonalData(image)},
		PaymentDetails:     &payments.PaymentDetails{SwiftCode: "GTBINGLA", PaymentRails: "nip"},
	})
	require.NoError(t, err)

	require.NoError(t, uuid.Validate(r.ID))
	assert.Equal(t, "0123456789", string(r.AccountNumber))
	assert.Equal(t, payments.AccountTypeBusiness, r.AccountType)
	assert.Equal(t, "NG", r.AccountCountryCode, "a country name is accepted and coded")
	assert.Equal(t, "Nigeria", r.AccountCountry)
	assert.Equal(t, "058", r.AccountBankCode)
	require.NotNil(t, r.Limit)
	assert.True(t, r.Limit.Equal(limit.Decimal), "limit %s", r.Limit)
	require.NotNil(t, r.Identification)
	assert.Equal(t, payments.IdentificationPassport, r.Identification.Type)
	assert.Empty(t, r.Identification.Image, "the image is not echoed")
	require.NotNil(t, r.PaymentDetails)
	assert.Equal(t, "GTBINGLA", r.PaymentDetails.SwiftCode)
	assert.False(t, r.IsInternalAccount)
	assert.Equal(t, r.CreatedAt, r.UpdatedAt)
	assert.Contains(t, string(r.RawJSON()), `"limit":"5000.50"`, "limit is a string on output")
	assert.NotEmpty(t, r.LastResponse().IdempotencyKey, "the SDK sends a key on create")

	stored := srv.Recipients()
	require.Len(t, stored, 1)
	assert.Equal(t, r.ID, stored[0].ID)
	assert.Equal(t, image, string(stored[0].Identification.Image), "the server keeps the image")
	got, ok := srv.Recipient(r.ID)
	require.True(t, ok)
	assert.Equal(t, "Ada Lovelace", got.AccountName)
	_, ok = srv.Recipient(uuid.NewString())
	assert.False(t, ok)
}

func TestCreateRecipientValidation(t *testing.T) {
	srv, _ := start(t)
	res := send(t, srv, http.MethodPost, "/payments/recipients", `{}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Equal(t, "validation_failed", res.env.Code)
	assert.ElementsMatch(t, []string{"account_number", "account_name", "account_type", "account_currency"}, res.fields())

	res = send(t, srv, http.MethodPost, "/payments/recipients", `{
		"account_number": "12/34", "account_name": "  ", "account_type": "robot", "account_currency": "naira",
		"amount_limit": -5, "identification": {"identification_image": "not base64!"},
		"payment_details": "nope", "account_bank_name": 7}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.ElementsMatch(t, []string{
		"account_number", "account_name", "account_type", "account_currency", "amount_limit",
		"identification.identification_image", "payment_details", "account_bank_name",
	}, res.fields())
	for _, f := range res.env.Errors {
		assert.NotEmpty(t, f.Message, f.Field)
	}
	assert.Empty(t, srv.Recipients(), "nothing is stored for a refused request")

	// An amount sent as a string is accepted, and the request log notes it.
	res = send(t, srv, http.MethodPost, "/payments/recipients", `{"account_number":"0123456789","account_name":"A",
		"account_type":"individual","account_currency":"NGN","amount_limit":"100.5"}`, nil)
	require.Equal(t, http.StatusCreated, res.status)
	reqs := srv.Requests()
	assert.Contains(t, reqs[len(reqs)-1].Notes[0], "amount_limit")
}

func TestUpdateRecipient(t *testing.T) {
	fixed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	srv, c := start(t, paymentstest.WithClock(func() time.Time { return fixed }))
	r := createRecipient(t, c, "100")
	srv.Advance(time.Minute)
	limit := payments.Amount{Decimal: dec("250.75")}
	u, err := c.Recipients.Update(ctx(t), r.ID, &payments.RecipientUpdateParams{
		AccountName:          "Ada King",
		AmountLimit:          &limit,
		IdentificationType:   payments.IdentificationNationalID,
		IdentificationNumber: "NIN-1",
		PaymentDetails:       &payments.PaymentDetails{BankCode: "044"},
	})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, u.LastResponse().StatusCode)
	assert.Equal(t, r.ID, u.ID)
	assert.Equal(t, "Ada King", u.AccountName)
	assert.Equal(t, r.AccountNumber, u.AccountNumber, "fields left out keep their value")
	assert.True(t, u.Limit.Equal(limit.Decimal))
	require.NotNil(t, u.Identification)
	assert.Equal(t, payments.IdentificationNationalID, u.Identification.Type)
	assert.Equal(t, "NIN-1", string(u.Identification.Number))
	assert.Equal(t, "044", u.PaymentDetails.BankCode)
	assert.Equal(t, r.CreatedAt, u.CreatedAt)
	assert.Equal(t, r.UpdatedAt.Add(time.Minute), u.UpdatedAt)

	stored, _ := srv.Recipient(r.ID)
	assert.Equal(t, "Ada King", stored.AccountName)

	// null removes the limit.
	res := send(t, srv, http.MethodPut, "/payments/recipients/"+r.ID, `{"amount_limit":null}`, nil)
	require.Equal(t, http.StatusOK, res.status)
	stored, _ = srv.Recipient(r.ID)
	assert.Nil(t, stored.Limit)

	// A refused update changes nothing.
	res = send(t, srv, http.MethodPut, "/payments/recipients/"+r.ID, `{"account_name":"New","account_type":"robot"}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Equal(t, []string{"account_type"}, res.fields())
	stored, _ = srv.Recipient(r.ID)
	assert.Equal(t, "Ada King", stored.AccountName)
}

func TestUpdateUnknownRecipient(t *testing.T) {
	srv, c := start(t)
	_, err := c.Recipients.Update(ctx(t), uuid.NewString(), &payments.RecipientUpdateParams{AccountName: "X"})
	require.ErrorIs(t, err, payments.ErrNotFound)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "not_found", string(apiErr.Code))

	res := send(t, srv, http.MethodPut, "/payments/recipients/not-a-uuid", `{"account_name":"X"}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Equal(t, []string{"id"}, res.fields())
}

func TestRecipientOfVirtualAccountIsInternal(t *testing.T) {
	_, c := start(t)
	va, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	p := recipientParams()
	p.AccountNumber = va.AccountNumber
	r, err := c.Recipients.Create(ctx(t), p)
	require.NoError(t, err)
	assert.True(t, r.IsInternalAccount)
}
