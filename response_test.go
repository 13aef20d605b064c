package payments_test

import (
	"context"
	"net/http"
	"testing"

	payments "github.com/paymentsapi/payments-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResponseReplayed: Response.Replayed is true exactly when the service's
// answer carries Idempotent-Replayed: true (any letter case, spaces
// around), as APIError.Replayed is for a refusal; Client.Do's Response says
// so too.
func TestResponseReplayed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		want   bool
	}{
		{"replayed", http.Header{"Idempotent-Replayed": {"true"}}, true},
		{"replayed, other case and spaces", http.Header{"Idempotent-Replayed": {" True "}}, true},
		{"first answer", http.Header{"Idempotent-Replayed": {"false"}}, false},
		{"no header", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodPost, "/payments/recipients",
				jsonResponder(201, okEnvelope(recipientJSON)).HeaderAdd(tc.header))
			r, err := h.client.Recipients.Create(context.Background(), validRecipientParams(), payments.WithIdempotencyKey("key-1"))
			require.NoError(t, err)
			require.NotNil(t, r.LastResponse())
			assert.Equal(t, tc.want, r.LastResponse().Replayed)
			assert.Equal(t, "key-1", r.LastResponse().IdempotencyKey)
			assert.Equal(t, 1, r.LastResponse().Attempts)

			resp, err := h.client.Do(context.Background(), http.MethodPost, "/payments/recipients", validRecipientParams(), nil,
				payments.WithIdempotencyKey("key-1"))
			require.NoError(t, err)
			assert.Equal(t, tc.want, resp.Replayed)
			assert.Len(t, h.requests(), 2, "one request each")
		})
	}
}
