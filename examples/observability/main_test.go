package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exportedSpan is what stdouttrace writes of a span, as far as the test
// reads it.
type exportedSpan struct {
	Name        string
	SpanKind    int
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ TraceID, SpanID string }
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
}

func (s exportedSpan) attr(key string) any {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.Value
		}
	}
	return nil
}

// TestObservabilityOnTheFake runs the program as `go run` would with no
// API key, and reads back what the exporters printed: the span tree of the
// journey, the retried initiate, the webhook spans and the metrics.
func TestObservabilityOnTheFake(t *testing.T) {
	t.Setenv("PAYMENTS_API_KEY", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))

	var spans []exportedSpan
	var metrics, paid string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		switch {
		case strings.HasPrefix(line, `{"Name"`):
			var s exportedSpan
			require.NoError(t, json.Unmarshal([]byte(line), &s), line)
			spans = append(spans, s)
		case strings.HasPrefix(line, `{"Resource"`):
			metrics = line
		case strings.HasPrefix(line, "paid "):
			paid = line
		default:
			t.Errorf("unexpected output line: %.200s", line)
		}
	}

	byName := map[string][]exportedSpan{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	for name, n := range map[string]int{
		"checkout": 1, "recipients.create": 1, "POST /payments/recipients": 1,
		"payments.initiate": 1, "POST /payments/initiate": 2, "payments.confirm": 1, "POST /payments/confirm": 1,
		"webhooks.trigger": 1, "POST /webhooks/events/trigger/{event_id}": 1,
	} {
		assert.Len(t, byName[name], n, name)
	}
	// recipient.created, recipient.verified, payment.initiated,
	// payment.completed, and the test event.
	assert.Len(t, byName["payments.webhook"], 5)

	require.Len(t, byName["checkout"], 1)
	checkout := byName["checkout"][0]
	assert.Equal(t, "paid order-", paid[:len("paid order-")])
	assert.True(t, strings.HasSuffix(paid, "trace "+checkout.SpanContext.TraceID), paid)
	for _, op := range []string{"recipients.create", "payments.initiate", "payments.confirm", "webhooks.trigger"} {
		for _, s := range byName[op] {
			assert.Equal(t, checkout.SpanContext.SpanID, s.Parent.SpanID, "%s is a child of checkout", op)
		}
	}
	require.Len(t, byName["payments.initiate"], 1)
	initiate := byName["payments.initiate"][0]
	assert.EqualValues(t, 2, initiate.attr("payments.attempts"))
	var statuses []any
	for _, a := range byName["POST /payments/initiate"] {
		assert.Equal(t, initiate.SpanContext.SpanID, a.Parent.SpanID)
		assert.Equal(t, 3, a.SpanKind, "client") // trace.SpanKindClient
		statuses = append(statuses, a.attr("http.response.status_code"))
	}
	assert.Equal(t, []any{503.0, 200.0}, statuses)

	for _, want := range []string{
		`"Name":"http.client.request.duration"`, `"Name":"payments.client.operation.duration"`,
		`"Name":"payments.client.retries"`, `"Name":"payments.webhook.deliveries"`,
		`{"Key":"payments.retry.reason","Value":{"Type":"STRING","Value":"503"}}`,
	} {
		assert.Contains(t, metrics, want)
	}
}
