package outcome_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/printcheck"
	"github.com/paymentsapi/payments-go/outcome"
)

// TestLogLinesMaskWhatTheServiceSent: the tracker's log lines about an event
// (a conflict, an event it cannot track) name the ids with anything shaped
// like a credential masked (their digits stay, to find the event by), and
// the error with personal data masked too, whatever the service put in
// them.
func TestLogLinesMaskWhatTheServiceSent(t *testing.T) {
	ctx := context.Background()
	for _, echo := range []string{printcheck.JWT, printcheck.Whsec, printcheck.HexSecret} {
		var logs bytes.Buffer
		l := slog.New(slog.NewJSONHandler(&logs, nil))
		c := &outcome.ConflictError{Kind: outcome.KindPayment, ID: echo, FirstEvent: "evt-1", FirstState: outcome.StateCompleted,
			SecondEvent: echo + "-2", SecondState: outcome.StateFailed}
		outcome.LogConflict(ctx, l, c, echo+"-2")
		outcome.LogUntrackable(ctx, l, &payments.Event{ID: echo, Type: payments.EventType(echo)}, errors.New("bad "+echo))
		assert.Equal(t, 2, strings.Count(logs.String(), "\n"), "two lines")
		for _, enc := range printcheck.Encodings(echo) {
			assert.NotContains(t, logs.String(), enc)
		}
		assert.Contains(t, logs.String(), `"first_event":"evt-1"`)
	}
	var logs bytes.Buffer
	outcome.LogUntrackable(ctx, slog.New(slog.NewJSONHandler(&logs, nil)), &payments.Event{ID: "evt-20250301123456"},
		errors.New("account "+printcheck.Account+", "+printcheck.Email))
	assert.Contains(t, logs.String(), `"event_id":"evt-20250301123456"`, "an id's digits stay")
	for _, pd := range []string{printcheck.Account, printcheck.Email} {
		assert.NotContains(t, logs.String(), pd, "the error's personal data is masked")
	}
}
