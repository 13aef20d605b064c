package payments_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

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

// printedForms prints v every way a careless caller might: fmt's verbs, and
// slog's text and JSON handlers, as a whole attribute.
func printedForms(t *testing.T, v any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out[verb] = fmt.Sprintf(verb, v)
	}
	var text, js bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("value", "v", v)
	slog.New(slog.NewJSONHandler(&js, nil)).Info("value", "v", v)
	out["slog text"], out["slog json"] = text.String(), js.String()
	require.NotContains(t, out["slog json"], "!ERROR", "LogValue must resolve")
	return out
}

func TestPersonalDataNeverPrinted(t *testing.T) {
	limit := decimal.RequireFromString("5000")
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
		"VirtualAccountCreateParams": payments.VirtualAccountCreateParams{AccountType: payments.AccountTypeIndividual,
			AccountName: "Ada", Email: pdEmail, BVN: pdBVN, MobileNumber: pdMobile,
			Metadata: &payments.VirtualAccountMetadata{Country: "NG"}},
		"VirtualAccount": &payments.VirtualAccount{ID: "va-1", AccountNumber: pdAccount},
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			for how, s := range printedForms(t, v) {
				for _, secret := range []string{pdAccount, pdIDNumber, pdImage, pdBVN, pdEmail, pdMobile} {
					assert.NotContains(t, s, secret, "%s printed with %s", name, how)
				}
			}
		})
	}
	assert.Contains(t, fmt.Sprint(values["Recipient"]), "****6789", "the last four digits tell accounts apart")
	assert.Contains(t, fmt.Sprint(values["RecipientCreateParams"]), "AccountName:Ada", "the rest is printed")
}

func TestClientNeverPrintsItsKey(t *testing.T) {
	const key = "sk_live_Pr1ntMeN0t"
	c, err := payments.NewClient(key, payments.WithBaseURL("https://api.payments.test"))
	require.NoError(t, err)
	forms := printedForms(t, c)
	for how, s := range forms {
		assert.NotContains(t, s, key, how)
	}
	assert.Equal(t, "payments.Client(https://api.payments.test)", fmt.Sprint(c))
	assert.Contains(t, forms["slog json"], `"v":{"base_url":"https://api.payments.test"}`)
}
