package payments_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
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

	ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventVirtualAccountCreated, virtualAccountJSON))
	require.NoError(t, err)
	evVA, err := ev.VirtualAccount() // keeps the event's data, in clear, for RawJSON
	require.NoError(t, err)
	values := map[string]any{"recipient": r, "*recipient": *r, "virtual account": va,
		"*virtual account": *va, "payment": p, "*payment": *p, "event's virtual account": evVA}
	for name, v := range values {
		forms := printedForms(t, v)
		for _, verb := range []string{"%q", "%x", "%X", "%d"} {
			forms[verb] = fmt.Sprintf(verb, v)
		}
		for how, s := range forms {
			for _, internal := range []string{"resp:", "raw:", "Body", "StatusCode", stanUUID,
				`"account_number": `, `\"account_number\": `, "[123 ", "7b0a", "7B0A", "123 10 9 34"} {
				assert.NotContains(t, s, internal, "%s printed with %s", name, how)
			}
			for _, secret := range []string{"0123456789", "9900112233"} {
				assert.NotContains(t, s, secret, "%s printed with %s", name, how)
				assert.NotContains(t, strings.ToLower(s), hex.EncodeToString([]byte(secret)), "%s printed with %s", name, how)
			}
		}
	}
	assert.Equal(t, fmt.Sprintf("%+v", r), fmt.Sprintf("%+v", *r))
	assert.Contains(t, fmt.Sprintf("%+v", r), "{ID:"+recipientUUID+" MerchantID:"+merchantUUID+" AccountNumber:****6789 AccountName:Ada Okafor")
	assert.Equal(t, fmt.Sprintf("%+v", r), fmt.Sprintf("%v", r), "every verb names the fields")
	assert.Contains(t, fmt.Sprintf("%+v", r), "Identification:{Type:passport")
	assert.Regexp(t, `^\{ID:`+paymentUUID+` Reference:order-1042 Status:pending Amount:15000.5 `, fmt.Sprintf("%+v", p))
	assert.Equal(t, fmt.Sprintf("%+v", p), printedForms(t, p)["%s"], "every verb names the fields")
	assert.Contains(t, fmt.Sprintf("%#v", va), "AccountNumber:****2233")
	assert.Contains(t, printedForms(t, p)["slog json"], `"v":{"id":"`+paymentUUID+`","reference":"order-1042"`, "no member for APIResource")
	assert.Equal(t, "payments.Client("+harnessBase+")", fmt.Sprintf("%#v", h.client))

	var zero payments.Payment
	assert.Nil(t, zero.RawJSON())
	assert.Nil(t, zero.LastResponse())
	assert.Contains(t, fmt.Sprintf("%+v", zero), "{ID: Reference: ")
}

// An event, a page of events and a trigger's result print their fields as
// text for every verb: never the SDK's internals, and an event never its
// data, alone or in a page (its events
// print with Event's, never its internals; Event and EventPage log
// without the data, although encoding/json keeps it).
func TestEventsAndTriggerResultsPrintTheirFields(t *testing.T) {
	const evJSON = `{"id":"evt-1","event":"payment.completed","created_at":"2024-05-01T10:00:00Z","data":{"account_number":"0123456789"}}`
	ev, err := payments.ParseEvent([]byte(evJSON))
	require.NoError(t, err)
	h := newHarness(t)
	h.on(http.MethodGet, "/webhooks/events", jsonResponder(200, okEnvelope(`{"events":[`+evJSON+`],"has_more":true}`)))
	page, err := h.client.Webhooks.ListEventsPage(context.Background(), nil)
	require.NoError(t, err)
	require.Contains(t, string(page.RawJSON()), "0123456789", "the page keeps its data for RawJSON")
	tr := &payments.TriggerResult{EventType: payments.EventPaymentCompleted, Data: json.RawMessage(`{"ok":true}`)}
	const evText = "{ID:evt-1 Type:payment.completed CreatedAt:2024-05-01T10:00:00Z}"
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.Equal(t, evText, fmt.Sprintf(verb, ev), verb)
		assert.Equal(t, `{EventType:payment.completed Data:{"ok":true}}`, fmt.Sprintf(verb, tr), verb)
	}
	assert.Equal(t, `{Events:[`+evText+`] HasMore:true}`, fmt.Sprintf("%+v", page))
	for name, v := range map[string]any{"event": ev, "page": page, "*page": *page} {
		forms := printedForms(t, v)
		for _, verb := range []string{"%q", "%x", "%d"} {
			forms[verb] = fmt.Sprintf(verb, v)
		}
		for how, s := range forms {
			assert.NotContains(t, s, "0123456789", "%s printed with %s", name, how)
			assert.NotContains(t, s, "account_number", "%s printed with %s", name, how)
			assert.NotContains(t, s, "[123 ", "%s printed with %s", name, how)
			assert.NotContains(t, strings.ToLower(s), hex.EncodeToString([]byte("0123456789")), "%s printed with %s", name, how)
		}
	}
	assert.Contains(t, printedForms(t, page)["slog json"],
		`"v":{"events":[{"id":"evt-1","event":"payment.completed","created_at":"2024-05-01T10:00:00Z"}],"has_more":true}`)

	b, err := json.Marshal(ev)
	require.NoError(t, err)
	assert.JSONEq(t, evJSON, string(b), "encoding/json writes the webhook body, data included")
}
