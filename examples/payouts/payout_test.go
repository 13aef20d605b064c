package main

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// Only a refusal the service answered (a 4xx) is a final failure: a 5xx,
// even one never retried (501, a proxy's 524), or a redirect says nothing
// of whether the payment was made, so the row stays unknown for the next
// run to repeat with its keys. Marking it failed could have it paid again
// by other means.
func TestFailedKeepsUnansweredOutcomesUnknown(t *testing.T) {
	j, _, err := openJournal(filepath.Join(t.TempDir(), "journal.jsonl"))
	require.NoError(t, err)
	defer j.close()
	p := &payer{journal: j}
	for _, tc := range []struct {
		status int
		want   string
	}{
		{http.StatusUnprocessableEntity, eventFailed},
		{http.StatusNotFound, eventFailed},
		{http.StatusServiceUnavailable, eventUnknown},
		{http.StatusNotImplemented, eventUnknown},
		{524, eventUnknown},
		{http.StatusFound, eventUnknown},
		{http.StatusTooManyRequests, eventUnknown},
	} {
		rec, err := p.failed(context.Background(), record{PayoutID: "po-1", Step: "confirm"}, &payments.APIError{StatusCode: tc.status})
		require.NoError(t, err)
		assert.Equal(t, tc.want, rec.Event, "HTTP %d", tc.status)
	}
}
