package payments_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResourcesPrintTheirFieldsNotInternals: a resource from the API prints
// (every verb, slog's handlers) its own fields, masked where personal, and
// never the SDK's internals: the response it came with or the body it keeps
// for RawJSON (which holds the account number in clear).
func TestResourcesPrintTheirFieldsNotInternals(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	h.on(http.MethodPost, "/accounts/virtual-accounts", jsonResponder(200, okEnvelope(virtualAccountJSON)))
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(paymentJSON)))
	r, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	va, err := h.client.VirtualAccounts.Create(context.Background(), validVirtualAccountParams())
	require.NoError(t, err)
	p, err := h.client.Payments.Initiate(context.Background(), validInitiateParams())
	require.NoError(t, err)

	for name, v := range map[string]any{"recipient": r, "*recipient": *r, "virtual account": va, "payment": p} {
		for how, s := range printedForms(t, v) {
			for _, internal := range []string{"apiResource", "resp:", "raw:", "Body", "StatusCode", stanUUID} {
				assert.NotContains(t, s, internal, "%s printed with %s", name, how)
			}
			assert.NotContains(t, s, "0123456789", "%s printed with %s", name, how)
			assert.NotContains(t, s, "9900112233", "%s printed with %s", name, how)
		}
	}
	assert.Equal(t, fmt.Sprintf("%+v", r), fmt.Sprintf("%+v", *r))
	assert.Contains(t, fmt.Sprintf("%+v", r), "{ID:"+recipientUUID+" MerchantID:"+merchantUUID+" AccountNumber:****6789 AccountName:Ada Okafor")
	assert.Equal(t, fmt.Sprintf("%+v", r), fmt.Sprintf("%v", r), "every verb names the fields")
	assert.Contains(t, fmt.Sprintf("%+v", r), "Identification:{Type:passport")
	assert.Contains(t, fmt.Sprintf("%+v", p), "Status:pending")
	assert.Contains(t, fmt.Sprintf("%+v", p), "Quote:{QuoteID:"+quoteUUID)
	assert.Contains(t, fmt.Sprintf("%#v", va), "AccountNumber:****2233")
	assert.Equal(t, "payments.Client("+harnessBase+")", fmt.Sprintf("%#v", h.client))
}
