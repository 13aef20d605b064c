package payments_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// validationCase is one call that must be refused before anything is sent,
// with exactly the fields that must be reported.
type validationCase struct {
	name   string
	call   func(c *payments.Client) error
	fields []string
}

func createRecipientWith(mut func(p *payments.RecipientCreateParams)) func(c *payments.Client) error {
	return func(c *payments.Client) error {
		p := validRecipientParams()
		mut(p)
		_, err := c.Recipients.Create(context.Background(), p)
		return err
	}
}

func updateRecipientWith(id string, p *payments.RecipientUpdateParams) func(c *payments.Client) error {
	return func(c *payments.Client) error {
		_, err := c.Recipients.Update(context.Background(), id, p)
		return err
	}
}

func validInitiateParams() *payments.PaymentInitiateParams {
	return &payments.PaymentInitiateParams{
		Amount: mustDecimal("100"), Currency: "NGN", RecipientID: recipientUUID, Reference: "order-1",
	}
}

func initiateWith(mut func(p *payments.PaymentInitiateParams)) func(c *payments.Client) error {
	return func(c *payments.Client) error {
		p := validInitiateParams()
		mut(p)
		_, err := c.Payments.Initiate(context.Background(), p)
		return err
	}
}

func validVirtualAccountParams() *payments.VirtualAccountCreateParams {
	return &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual, AccountName: "Ada Okafor", Email: "ada@example.com",
		FirstName: "Ada", LastName: "Okafor",
	}
}

func virtualAccountWith(mut func(p *payments.VirtualAccountCreateParams)) func(c *payments.Client) error {
	return func(c *payments.Client) error {
		p := validVirtualAccountParams()
		mut(p)
		_, err := c.VirtualAccounts.Create(context.Background(), p)
		return err
	}
}

func validationCases() []validationCase {
	return []validationCase{
		// Recipients.Create: the spec's required fields.
		{"recipient nil params", func(c *payments.Client) error {
			_, err := c.Recipients.Create(context.Background(), nil)
			return err
		}, []string{"params"}},
		{"recipient all required missing", createRecipientWith(func(p *payments.RecipientCreateParams) {
			*p = payments.RecipientCreateParams{}
		}), []string{"account_number", "account_name", "account_type", "account_currency"}},
		{"recipient account_number missing", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountNumber = "" }), []string{"account_number"}},
		{"recipient account_number symbols", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountNumber = "0123;DROP" }), []string{"account_number"}},
		{"recipient account_number too long", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountNumber = strings.Repeat("1", 35) }), []string{"account_number"}},
		{"recipient account_name blank", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountName = "   " }), []string{"account_name"}},
		{"recipient account_name control", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountName = "Ada\x00" }), []string{"account_name"}},
		{"recipient account_name bad UTF-8", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountName = "Ada\xff" }), []string{"account_name"}},
		{"recipient account_type missing", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountType = "" }), []string{"account_type"}},
		{"recipient account_type unknown", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountType = "sole_trader" }), []string{"account_type"}},
		{"recipient account_currency missing", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountCurrency = "" }), []string{"account_currency"}},
		{"recipient account_currency lower case", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountCurrency = "ngn" }), []string{"account_currency"}},
		{"recipient account_currency two letters", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountCurrency = "NG" }), []string{"account_currency"}},
		{"recipient amount_limit zero", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AmountLimit = decimalPtr("0") }), []string{"amount_limit"}},
		{"recipient amount_limit negative", createRecipientWith(func(p *payments.RecipientCreateParams) { p.AmountLimit = decimalPtr("-1") }), []string{"amount_limit"}},
		{"recipient image not base64", createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.Identification = &payments.Identification{Type: payments.IdentificationPassport, Number: "A123", Image: "not base64!"}
		}), []string{"identification.identification_image"}},
		{"recipient image url-safe alphabet", createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.Identification = &payments.Identification{Image: "-_-_"}
		}), []string{"identification.identification_image"}},
		{"recipient image bad padding", createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.Identification = &payments.Identification{Image: "aGVsbG8"}
		}), []string{"identification.identification_image"}},
		{"recipient identification number control", createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.Identification = &payments.Identification{Number: "A1\n23"}
		}), []string{"identification.identification_number"}},
		{"recipient payment details", createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.PaymentDetails = &payments.PaymentDetails{AccountNumber: "12/34", SwiftCode: "AB\tCD"}
		}), []string{"payment_details.account_number", "payment_details.swift_code"}},

		// Recipients.Update: the id is a UUID, so nothing can inject a path.
		{"update id empty", updateRecipientWith("", &payments.RecipientUpdateParams{AccountName: "A"}), []string{"id"}},
		{"update id traversal", updateRecipientWith("../x", &payments.RecipientUpdateParams{AccountName: "A"}), []string{"id"}},
		{"update id slash", updateRecipientWith("a/b", &payments.RecipientUpdateParams{AccountName: "A"}), []string{"id"}},
		{"update id not a UUID", updateRecipientWith("recipient-42", &payments.RecipientUpdateParams{AccountName: "A"}), []string{"id"}},
		{"update id with query", updateRecipientWith(recipientUUID+"?x=1", &payments.RecipientUpdateParams{AccountName: "A"}), []string{"id"}},
		{"update id braces", updateRecipientWith("{"+recipientUUID+"}", &payments.RecipientUpdateParams{AccountName: "A"}), []string{"id"}},
		{"update id urn", updateRecipientWith("urn:uuid:"+recipientUUID, &payments.RecipientUpdateParams{AccountName: "A"}), []string{"id"}},
		{"update id without dashes", updateRecipientWith(strings.ReplaceAll(recipientUUID, "-", ""), &payments.RecipientUpdateParams{AccountName: "A"}), []string{"id"}},
		{"update nothing to change", updateRecipientWith(recipientUUID, &payments.RecipientUpdateParams{}), []string{"params"}},
		{"update nil params", updateRecipientWith(recipientUUID, nil), []string{"params"}},
		{"update bad fields", updateRecipientWith(recipientUUID, &payments.RecipientUpdateParams{
			AccountType: "person", AccountCurrency: "naira", AmountLimit: decimalPtr("-5"), IdentificationNumber: "12\r\n34",
		}), []string{"account_type", "account_currency", "amount_limit", "identification_number"}},

		// Payments.Initiate.
		{"initiate nil params", func(c *payments.Client) error {
			_, err := c.Payments.Initiate(context.Background(), nil)
			return err
		}, []string{"params"}},
		{"initiate empty params", initiateWith(func(p *payments.PaymentInitiateParams) { *p = payments.PaymentInitiateParams{} }),
			[]string{"amount", "currency", "recipient_id", "reference"}},
		{"initiate amount zero", initiateWith(func(p *payments.PaymentInitiateParams) { p.Amount = mustDecimal("0") }), []string{"amount"}},
		{"initiate amount negative", initiateWith(func(p *payments.PaymentInitiateParams) { p.Amount = mustDecimal("-0.01") }), []string{"amount"}},
		{"initiate amount too large", initiateWith(func(p *payments.PaymentInitiateParams) { p.Amount = mustDecimal("1000000000000000000") }), []string{"amount"}},
		{"initiate amount too precise", initiateWith(func(p *payments.PaymentInitiateParams) { p.Amount = mustDecimal("0.0000000000000000001") }), []string{"amount"}},
		{"initiate currency", initiateWith(func(p *payments.PaymentInitiateParams) { p.Currency = "Naira" }), []string{"currency"}},
		{"initiate recipient_id", initiateWith(func(p *payments.PaymentInitiateParams) { p.RecipientID = "../recipients" }), []string{"recipient_id"}},
		{"initiate reference blank", initiateWith(func(p *payments.PaymentInitiateParams) { p.Reference = " " }), []string{"reference"}},
		{"initiate description control", initiateWith(func(p *payments.PaymentInitiateParams) { p.Description = "a\x1bb" }), []string{"description"}},

		// Payments.Confirm.
		{"confirm nil params", func(c *payments.Client) error {
			_, err := c.Payments.Confirm(context.Background(), nil)
			return err
		}, []string{"params"}},
		{"confirm empty params", func(c *payments.Client) error {
			_, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{})
			return err
		}, []string{"reference", "quote_id"}},

		// VirtualAccounts.Create.
		{"va nil params", func(c *payments.Client) error {
			_, err := c.VirtualAccounts.Create(context.Background(), nil)
			return err
		}, []string{"params"}},
		{"va empty params", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { *p = payments.VirtualAccountCreateParams{} }),
			[]string{"account_type", "account_name", "email"}},
		{"va account_type unknown", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.AccountType = "joint" }), []string{"account_type"}},
		{"va email missing at", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.Email = "ada.example.com" }), []string{"email"}},
		{"va email with name", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.Email = "Ada <ada@example.com>" }), []string{"email"}},
		{"va email with spaces", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.Email = " ada@example.com" }), []string{"email"}},
		{"va individual without names", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.FirstName, p.LastName = "", "" }),
			[]string{"first_name", "last_name"}},
		{"va bvn ten digits", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.BVN = "1234567890" }), []string{"bvn"}},
		{"va bvn letters", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.BVN = "1234567890A" }), []string{"bvn"}},
		{"va Nigerian without bvn", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) {
			p.Metadata = &payments.VirtualAccountMetadata{Country: "NG"}
		}), []string{"bvn"}},
		{"va Nigeria by name without bvn", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) {
			p.Metadata = &payments.VirtualAccountMetadata{Country: "Nigeria"}
		}), []string{"bvn"}},
		{"va mobile", virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.MobileNumber = "call me" }), []string{"mobile_number"}},

		// Webhooks.Trigger.
		{"trigger empty event", func(c *payments.Client) error {
			_, err := c.Webhooks.Trigger(context.Background(), "")
			return err
		}, []string{"event_id"}},
		{"trigger dot-dot event", func(c *payments.Client) error {
			_, err := c.Webhooks.Trigger(context.Background(), "..")
			return err
		}, []string{"event_id"}},
		{"trigger dot event", func(c *payments.Client) error {
			_, err := c.Webhooks.Trigger(context.Background(), ".")
			return err
		}, []string{"event_id"}},
	}
}

func TestValidationRefusesBeforeSending(t *testing.T) {
	for _, tc := range validationCases() {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			err := tc.call(h.client)
			require.Error(t, err)
			var verr *payments.ValidationError
			require.ErrorAs(t, err, &verr)
			assert.ErrorIs(t, err, payments.ErrInvalidParams)

			got := make([]string, 0, len(verr.Fields))
			for _, f := range verr.Fields {
				got = append(got, f.Field)
				assert.NotEmpty(t, f.Message)
				assert.Contains(t, err.Error(), f.Field+": "+f.Message)
			}
			want := append([]string(nil), tc.fields...)
			sort.Strings(got)
			sort.Strings(want)
			assert.Equal(t, want, got, "every bad field, and only those, at once")

			assert.Zero(t, h.mt.GetTotalCallCount(), "nothing is sent")
			_, hasKey := payments.IdempotencyKeyOf(err)
			assert.False(t, hasKey)
		})
	}
}

func TestValidationAcceptsValidParams(t *testing.T) {
	h := newHarness(t)
	h.on("POST", "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	h.on("POST", "/accounts/virtual-accounts", jsonResponder(200, okEnvelope(virtualAccountJSON)))
	ctx := context.Background()

	p := validRecipientParams()
	p.AccountNumber = "GB29 NWBK 6016 1331 9268 19"
	p.AccountCountryCode = "Nigeria"
	p.Identification = &payments.Identification{Type: "drivers_licence", Number: "DL-778", Image: "iVBORw0KGgo="}
	p.AmountLimit = decimalPtr("0.000000000000000001")
	_, err := h.client.Recipients.Create(ctx, p)
	require.NoError(t, err)

	for _, va := range []*payments.VirtualAccountCreateParams{
		{AccountType: payments.AccountTypeIndividual, AccountName: "Ada", Email: "ada+pay@example.co.uk", FirstName: "Ada", LastName: "O",
			BVN: "12345678901", Metadata: &payments.VirtualAccountMetadata{Country: "ng"}},
		{AccountType: payments.AccountTypeBusiness, AccountName: "Acme", Email: "ops@acme.example"},
		{AccountType: payments.AccountTypeBusiness, AccountName: "Acme GH", Email: "ops@acme.example",
			Metadata: &payments.VirtualAccountMetadata{Country: "GH"}},
	} {
		_, err := h.client.VirtualAccounts.Create(ctx, va)
		require.NoError(t, err)
	}
	assert.Equal(t, 4, h.calls())
}

func TestValidationReportsManyFieldsAtOnce(t *testing.T) {
	h := newHarness(t)
	_, err := h.client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual,
		Email:       "not-an-email",
		BVN:         "123",
		Metadata:    &payments.VirtualAccountMetadata{Country: "NG"},
	})
	var verr *payments.ValidationError
	require.ErrorAs(t, err, &verr)
	for _, f := range []string{"account_name", "email", "first_name", "last_name", "bvn"} {
		assert.True(t, verr.Has(f), "%s missing from %v", f, verr)
	}
	assert.Zero(t, h.calls())
}

func TestValidationNeverEchoesPersonalData(t *testing.T) {
	const (
		bvn      = "98765432101x" // 12 characters: invalid
		idNumber = "PASS\x01PORT-77341"
		image    = "SECRETIMAGEDATA$$$"
	)
	h := newHarness(t)
	_, err := h.client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme", Email: "ops@acme.example", BVN: bvn,
	})
	var verr *payments.ValidationError
	require.ErrorAs(t, err, &verr)
	assert.True(t, verr.Has("bvn"))
	assert.NotContains(t, err.Error(), bvn)
	assert.NotContains(t, err.Error(), "98765432101")

	p := validRecipientParams()
	p.AccountNumber = ""
	p.Identification = &payments.Identification{Type: payments.IdentificationPassport, Number: idNumber, Image: image}
	_, err = h.client.Recipients.Create(context.Background(), p)
	require.ErrorAs(t, err, &verr)
	assert.True(t, verr.Has("identification.identification_number"))
	assert.True(t, verr.Has("identification.identification_image"))
	assert.NotContains(t, err.Error(), "PORT-77341")
	assert.NotContains(t, err.Error(), "SECRETIMAGE")

	_, err = h.client.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{
		IdentificationNumber: idNumber,
	})
	require.ErrorAs(t, err, &verr)
	assert.NotContains(t, err.Error(), "PORT-77341")
	assert.Zero(t, h.calls())
}

func TestPersonalDataHiddenWhenPrinted(t *testing.T) {
	id := payments.Identification{Type: payments.IdentificationNationalID, Number: "NIN-12345678", Image: "aGVsbG8="}
	va := payments.VirtualAccountCreateParams{AccountType: payments.AccountTypeIndividual, AccountName: "Ada", BVN: "12345678901"}
	up := payments.RecipientUpdateParams{IdentificationNumber: "NIN-12345678"}
	for _, s := range []string{
		id.String(), id.GoString(), va.String(), va.GoString(), up.String(), up.GoString(),
		sprintAll(id), sprintAll(&id), sprintAll(va), sprintAll(&va), sprintAll(up),
		id.LogValue().String(), va.LogValue().String(),
	} {
		assert.NotContains(t, s, "12345678")
		assert.NotContains(t, s, "aGVsbG8=")
	}
	assert.Contains(t, id.String(), "national_id")
}

func sprintAll(v any) string {
	var b strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		b.WriteString(fmt.Sprintf(verb, v))
		b.WriteString("|")
	}
	return b.String()
}

func TestValidationErrorIsNotOtherErrors(t *testing.T) {
	err := error(&payments.ValidationError{Fields: []payments.FieldError{{Field: "x", Message: "y"}}})
	var apiErr *payments.APIError
	assert.False(t, errors.As(err, &apiErr))
	assert.NotErrorIs(t, err, payments.ErrMalformedResponse)
}
