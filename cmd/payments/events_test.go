package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// triggerEvents makes the fake emit an event of each type, in order, and
// returns the fake's events.
func triggerEvents(t *testing.T, f *fake, types ...payments.EventType) []paymentstest.Event {
	t.Helper()
	client := f.Client()
	for _, typ := range types {
		_, err := client.Webhooks.Trigger(context.Background(), typ)
		require.NoError(t, err)
	}
	return f.Events()
}

// eventLine is how events list prints an event.
func eventLine(ev paymentstest.Event) string {
	return fmt.Sprintf("%s  %-32s  %s\n", ev.CreatedAt.UTC().Format(time.RFC3339), ev.Type, ev.ID)
}

func TestEventsList(t *testing.T) {
	f := startFake(t)
	evs := triggerEvents(t, f, payments.EventPaymentCompleted, payments.EventRecipientCreated,
		payments.EventVirtualAccountPaymentReceived, payments.EventPaymentFailed)
	require.Len(t, evs, 4)

	code, stdout, stderr := runCLI(t, f.env, "events", "list")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	assert.Equal(t, eventLine(evs[0])+eventLine(evs[1])+eventLine(evs[2])+eventLine(evs[3]), stdout)

	code, stdout, stderr = runCLI(t, f.env, "events", "list", "--type", "payment.completed,payment.failed")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, eventLine(evs[0])+eventLine(evs[3]), stdout)
	code, stdout, _ = runCLI(t, f.env, "events", "list", "--type", "payment.failed", "--type", "recipient.created")
	require.Equal(t, exitOK, code)
	assert.Equal(t, eventLine(evs[1])+eventLine(evs[3]), stdout)

	code, stdout, stderr = runCLI(t, f.env, "events", "list", "--after", evs[1].ID)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, eventLine(evs[2])+eventLine(evs[3]), stdout)
}

// TestEventsListJSON: --json prints each event's body as the service gave
// it, one a line.
func TestEventsListJSON(t *testing.T) {
	f := startFake(t)
	evs := triggerEvents(t, f, payments.EventPaymentCompleted, payments.EventAccountBalanceLow)
	code, stdout, stderr := runCLI(t, f.env, "events", "list", "--json")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 2)
	for i, line := range lines {
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, evs[i].Body))
		assert.Equal(t, compact.String(), line)
		ev, err := payments.ParseEvent([]byte(line))
		require.NoError(t, err)
		assert.Equal(t, evs[i].ID, ev.ID)
	}
}

// TestEventsListLimit: --limit prints the newest events (oldest of them
// first, like tail) and says how many older ones it left out; with --after it
// pages forward, asks for pages no larger than needed and says how to go on.
func TestEventsListLimit(t *testing.T) {
	f := startFake(t)
	evs := triggerEvents(t, f, payments.EventPaymentCompleted, payments.EventPaymentFailed, payments.EventPaymentRejected)
	code, stdout, stderr := runCLI(t, f.env, "events", "list", "--limit", "2")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, eventLine(evs[1])+eventLine(evs[2]), stdout, "the 2 newest")
	assert.Equal(t, "1 older event not shown (--limit 2 prints the newest): --limit 0 prints them all, --since narrows the window\n", stderr)

	// Exactly as many as there are: no note.
	code, stdout, stderr = runCLI(t, f.env, "events", "list", "--limit", "3")
	require.Equal(t, exitOK, code)
	assert.Equal(t, eventLine(evs[0])+eventLine(evs[1])+eventLine(evs[2]), stdout)
	assert.Empty(t, stderr)

	code, stdout, _ = runCLI(t, f.env, "events", "list", "--limit", "0")
	require.Equal(t, exitOK, code)
	assert.Equal(t, 3, strings.Count(stdout, "\n"))

	// Paging forward from the first event: the next one, then how to go on.
	before := len(f.Requests())
	code, stdout, stderr = runCLI(t, f.env, "events", "list", "--after", evs[0].ID, "--limit", "1")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, eventLine(evs[1]), stdout)
	assert.Equal(t, "More events follow: payments events list --after "+evs[1].ID+"\n", stderr)
	reqs := f.Requests()[before:]
	require.Len(t, reqs, 2, "two pages of 1")
	assert.Equal(t, "/webhooks/events", reqs[0].Path)
}

// TestEventsListSince: --since takes an RFC 3339 time or a duration
// before now, and the service filters on it.
func TestEventsListSince(t *testing.T) {
	f := startFake(t)
	f.Advance(-3 * time.Hour)                           // the fake's clock 3 hours behind this machine's
	triggerEvents(t, f, payments.EventPaymentCompleted) // 3 hours ago
	f.Advance(90 * time.Minute)
	triggerEvents(t, f, payments.EventPaymentFailed) // 90 minutes ago
	f.Advance(90 * time.Minute)
	evs := triggerEvents(t, f, payments.EventPaymentRejected) // now
	require.Len(t, evs, 3)

	for since, want := range map[string]string{
		"2h":  eventLine(evs[1]) + eventLine(evs[2]),
		"1h":  eventLine(evs[2]),
		"24h": eventLine(evs[0]) + eventLine(evs[1]) + eventLine(evs[2]),
		evs[1].CreatedAt.UTC().Format(time.RFC3339): eventLine(evs[1]) + eventLine(evs[2]),
	} {
		code, stdout, stderr := runCLI(t, f.env, "events", "list", "--since", since)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, want, stdout, since)
	}
}

// TestEventsListUnavailable: a service without the list operation (404)
// gets the SDK's explanation and the stan, exit 1.
func TestEventsListUnavailable(t *testing.T) {
	f := startFake(t)
	require.NoError(t, f.InjectFault(paymentstest.Fault{Status: http.StatusNotFound, Times: 1, Path: "/webhooks/events"}))
	code, stdout, stderr := runCLI(t, f.env, "events", "list")
	assert.Equal(t, exitFailure, code)
	assert.Empty(t, stdout)
	assert.Equal(t, payments.ErrListEventsUnavailable.Error()+": payments: HTTP 404 Not Found: "+
		"Not Found (fault injected by paymentstest) (code=not_found, stan="+f.lastStan(t)+") after 1 attempt(s)\n", stderr)
}
