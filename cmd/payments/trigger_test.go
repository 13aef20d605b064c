package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// TestTrigger: the trigger operation is called once with the type asked
// for, and the answer printed: the type, the status, the stan, the message
// and the event's id.
func TestTrigger(t *testing.T) {
	f := startFake(t)
	code, stdout, stderr := runCLI(t, f.env, "trigger", "payment.completed")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	reqs := f.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "POST /webhooks/events/trigger/payment.completed", reqs[0].Method+" "+reqs[0].Path)
	events := f.Events()
	require.Len(t, events, 1)
	assert.Equal(t, payments.EventPaymentCompleted, events[0].Type)
	assert.Equal(t, "Triggered payment.completed: HTTP 200, stan "+reqs[0].Stan+"\n"+
		"  message:  Test event payment.completed queued for delivery\n"+
		"  event id: "+events[0].ID+"\n", stdout)
}
