package paymentstest_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/eventkind"
	"github.com/paymentsapi/payments-go/webhook"
)

// testIDPrefix is how the ids of triggered resources start (package doc).
const testIDPrefix = "00000000-0000-4000-8000-"

// marks returns, for one event's data, its reference and the ids of the
// resources in it (members named id or ending in _id, at any depth, except
// merchant_id: the merchant is real), by dotted name.
func marks(t *testing.T, data json.RawMessage) (reference string, hasReference bool, ids map[string]string) {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m), "%s", data)
	ids = map[string]string{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			switch v := v.(type) {
			case map[string]any:
				walk(prefix+k+".", v)
			case string:
				if (k == "id" || strings.HasSuffix(k, "_id")) && k != "merchant_id" {
					ids[prefix+k] = v
				}
			}
		}
	}
	walk("", m)
	reference, hasReference = m["reference"].(string)
	return reference, hasReference, ids
}

// TestTriggeredEventsAreMarked: every resource of a test event from POST
// /webhooks/events/trigger/{event_id} carries a reference starting with
// "test_trigger_", and ids that are UUIDs starting with
// eight zeros; the SDK's typed accessors still read them.
func TestTriggeredEventsAreMarked(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, fastHooks(rc.URL)...)
	for _, kind := range eventkind.All() {
		_, err := c.Webhooks.Trigger(ctx(t), kind)
		require.NoError(t, err, kind)
	}
	waitDeliveries(t, srv)
	got := rc.deliveries()
	require.Len(t, got, len(eventkind.All()))
	refs := map[string]bool{}
	for _, d := range got {
		ev, err := webhook.ConstructEvent(d.body, d.header, secret)
		require.NoError(t, err)
		ref, ok, ids := marks(t, ev.Data)
		require.True(t, ok, "%s has a reference: %s", ev.Type, ev.Data)
		assert.True(t, strings.HasPrefix(ref, "test_trigger_"), "%s: reference %q", ev.Type, ref)
		assert.True(t, webhook.Triggered(ev), "%s: webhook.Triggered", ev.Type)
		assert.False(t, refs[ref], "%s: reference %q is not reused", ev.Type, ref)
		refs[ref] = true

		var names []string
		for name, id := range ids {
			names = append(names, name)
			assert.True(t, strings.HasPrefix(id, testIDPrefix), "%s: %s %q looks like a test id", ev.Type, name, id)
			assert.NoError(t, uuid.Validate(id), "%s: %s %q is still a UUID", ev.Type, name, id)
		}
		sort.Strings(names)
		if strings.HasPrefix(string(ev.Type), "account.") {
			assert.Empty(t, names, "%s has no resource id", ev.Type)
		} else {
			assert.Contains(t, names, "id", "%s: %s", ev.Type, ev.Data)
		}

		// The typed accessors see the same marks.
		switch {
		case strings.HasPrefix(string(ev.Type), "payment."):
			p, err := ev.Payment()
			require.NoError(t, err)
			assert.Equal(t, ref, p.Reference)
			assert.True(t, strings.HasPrefix(p.ID, testIDPrefix))
		case ev.Type == payments.EventVirtualAccountPaymentReceived:
			vp, err := ev.VirtualAccountPayment()
			require.NoError(t, err)
			assert.Equal(t, ref, vp.Reference)
			assert.True(t, strings.HasPrefix(vp.VirtualAccountID, testIDPrefix))
		}
	}
	assert.Empty(t, srv.Payments(), "test events store nothing")
	assert.Empty(t, srv.Recipients())
	assert.Empty(t, srv.VirtualAccounts())
}

// TestOrdinaryEventsAreNotMarked: events of real operations never carry the
// prefix or a test id, and a payment cannot take the reserved prefix.
func TestOrdinaryEventsAreNotMarked(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, fastHooks(rc.URL)...)
	r := createRecipient(t, c, "100")
	p := initiate(t, c, r.ID, "50", "order-1")
	_, err := c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	p = initiate(t, c, r.ID, "500", "order-2") // over the limit: rejected
	_, err = c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	va, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), dec("10"), "")
	require.NoError(t, err)
	waitDeliveries(t, srv)

	got := rc.deliveries()
	require.Equal(t, 8, len(got), "2 recipient, 4 payment and 2 virtual account events")
	kinds := map[payments.EventType]bool{}
	for _, d := range got {
		ev, err := webhook.ConstructEvent(d.body, d.header, secret)
		require.NoError(t, err)
		kinds[ev.Type] = true
		assert.NotContains(t, string(d.body), "test_trigger_", "%s", ev.Type)
		assert.False(t, webhook.Triggered(ev), "%s: webhook.Triggered", ev.Type)
		_, _, ids := marks(t, ev.Data)
		for name, id := range ids {
			assert.False(t, strings.HasPrefix(id, testIDPrefix), "%s: %s %q", ev.Type, name, id)
		}
	}
	assert.True(t, kinds[payments.EventPaymentCompleted] && kinds[payments.EventPaymentRejected] &&
		kinds[payments.EventVirtualAccountPaymentReceived], "the flow covered payments and money received: %v", kinds)

	res := send(t, srv, http.MethodPost, "/payments/initiate",
		`{"amount": 10, "currency": "NGN", "recipient_id": "`+r.ID+`", "reference": "`+"test_trigger_"+`order-3"}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Equal(t, string(payments.CodeValidationFailed), res.env.Code)
	assert.Equal(t, []string{"reference"}, res.fields())
	assert.Len(t, srv.PaymentsByReference("test_trigger_"+"order-3"), 0)
}
