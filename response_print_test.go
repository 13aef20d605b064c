package payments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	payments "github.com/paymentsapi/payments-go"
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
			for _, internal := range []string{"APIResource", "resp:", "raw:", "Body", "StatusCode", stanUUID} {
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

// An event, a page of events and a trigger's result print their fields as
// text for every verb: never byte numbers, never the SDK's internals, and an
// event never its data.
func TestEventsAndTriggerResultsPrintTheirFields(t *testing.T) {
	ev, err := payments.ParseEvent([]byte(`{"id":"evt-1","event":"payment.completed","created_at":"2024-05-01T10:00:00Z","data":{"account_number":"0123456789"}}`))
	require.NoError(t, err)
	page := &payments.EventPage{Events: []*payments.Event{ev}, HasMore: true}
	tr := &payments.TriggerResult{EventType: payments.EventPaymentCompleted, Data: json.RawMessage(`{"ok":true}`)}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.Equal(t, "{ID:evt-1 Type:payment.completed CreatedAt:2024-05-01T10:00:00Z}", fmt.Sprintf(verb, ev), verb)
		assert.Equal(t, "{Events:[{ID:evt-1 Type:payment.completed CreatedAt:2024-05-01T10:00:00Z}] HasMore:true}", fmt.Sprintf(verb, page), verb)
		assert.Equal(t, `{EventType:payment.completed Data:{"ok":true}}`, fmt.Sprintf(verb, tr), verb)
	}
}
