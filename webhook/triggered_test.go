package webhook_test

import (
	"encoding/json"
	"testing"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// TestTriggered: an event is a test event exactly when its resource's
// reference starts with test_trigger_ (docs/assumptions.md, "Test events");
// data that is not an object, a reference that is not a string, and a nil
// event are not.
func TestTriggered(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{`{"reference":"test_trigger_0f3c"}`, true},
		{`{"id":"p1","reference":"test_trigger_"}`, true},
		{`{"reference":"order-1"}`, false},
		{`{"reference":"order-test_trigger_1"}`, false},
		{`{"reference":"TEST_TRIGGER_1"}`, false},
		{`{"reference":42}`, false},
		{`{"note":"test_trigger_1"}`, false},
		{`["test_trigger_1"]`, false},
		{`"test_trigger_1"`, false},
		{`null`, false},
	} {
		ev := &payments.Event{Type: payments.EventPaymentCompleted, Data: json.RawMessage(c.data)}
		if got := webhook.Triggered(ev); got != c.want {
			t.Errorf("Triggered(%s) = %v, want %v", c.data, got, c.want)
		}
	}
	if webhook.Triggered(nil) {
		t.Error("Triggered(nil) = true")
	}
}
