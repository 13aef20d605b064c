package main

import (
	"bytes"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// replayLine is what listen says about events it did not deliver.
func replayLine(since time.Time) string {
	return "; replay with: payments listen --since " + since.UTC().Format(time.RFC3339) + " --forward-to ..."
}

// TestListenRetriesUntilDelivered: a receiver that answers 500 twice gets
// the event a third time, after each wait, and processes it once; every
// attempt has its line.
func TestListenRetriesUntilDelivered(t *testing.T) {
	f := startFake(t)
	rc := newReceiver(t)
	rc.override = func(n int, _ []byte) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return 0
	}
	l := startListen(t, f.with(envWebhookSecret, "whsec_retry_test"), "--forward-to", rc.URL(), "--interval", "20ms", "--retries", "20ms,40ms,80ms")
	v, err := webhook.NewSignatureVerifier([]string{"whsec_retry_test"})
	require.NoError(t, err)
	rc.verify(v)

	ev := triggerEvents(t, f, payments.EventPaymentCompleted)[0]
	first := l.waitFor(t, deliveryLine(ev, rc.URL(), "[500]", " (attempt 1 of 4, next in 20ms)"))
	l.waitFor(t, deliveryLine(ev, rc.URL(), "[500]", " (attempt 2 of 4, next in 40ms)"))
	l.waitFor(t, deliveryLine(ev, rc.URL(), "[200]", " (attempt 3 of 4)"))
	assert.Equal(t, []string{ev.ID}, rc.processedIDs())
	assert.Equal(t, 3, rc.requests())
	out := l.stdout.String()
	assert.Less(t, strings.Index(out, first[0]), strings.Index(out, "(attempt 2 of 4"), "in order")
	assert.NotContains(t, out, "gave up")
	assert.Equal(t, exitOK, l.stop(t))
	assert.True(t, strings.HasSuffix(l.stdout.String(), "  stopped\n"), "nothing left undelivered")
}

// TestListenGivesUp: after the last retry, listen says it gave up and how
// to replay the event, and sends nothing more.
func TestListenGivesUp(t *testing.T) {
	f := startFake(t)
	rc := newReceiver(t)
	rc.override = func(int, []byte) int { return http.StatusServiceUnavailable }
	l := startListen(t, f.env, "--forward-to", rc.URL(), "--interval", "20ms", "--retries", "10ms,10ms")
	ev := triggerEvents(t, f, payments.EventRecipientVerified)[0]
	l.waitFor(t, deliveryLine(ev, rc.URL(), "[503]", " (attempt 1 of 3, next in 10ms)"))
	l.waitFor(t, deliveryLine(ev, rc.URL(), "[503]", " (attempt 2 of 3, next in 10ms)"))
	l.waitFor(t, deliveryLine(ev, rc.URL(), "[503]", " (attempt 3 of 3)"))
	l.waitFor(t, regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  recipient.verified  `+ev.ID+`  gave up after 3 attempts`+regexp.QuoteMeta(replayLine(ev.CreatedAt))+`$`))
	time.Sleep(200 * time.Millisecond) // twenty retry waits: long enough to see a fourth attempt
	assert.Equal(t, 3, rc.requests())
	assert.Equal(t, exitOK, l.stop(t))
	assert.True(t, strings.HasSuffix(l.stdout.String(), "  stopped\n"), "a given-up event is not named again")
}

// TestListenFailingEventDoesNotHoldUpOthers: while one event waits for its
// retry, the next ones are delivered; Ctrl-C ends the wait at once and
// names the event not delivered, with how to replay it.
func TestListenFailingEventDoesNotHoldUpOthers(t *testing.T) {
	f := startFake(t)
	rc := newReceiver(t)
	var failing []byte // the body of the first event, which the receiver refuses
	rc.override = func(n int, body []byte) int {
		if n == 1 {
			failing = body
		}
		if bytes.Equal(body, failing) {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	l := startListen(t, f.env, "--forward-to", rc.URL(), "--interval", "20ms", "--retries", "1h")
	evs := triggerEvents(t, f, payments.EventPaymentCompleted, payments.EventPaymentFailed, payments.EventPaymentRejected)
	l.waitFor(t, deliveryLine(evs[0], rc.URL(), "[500]", " (attempt 1 of 2, next in 1h0m0s)"))
	l.waitFor(t, deliveryLine(evs[1], rc.URL(), "[200]", ""))
	l.waitFor(t, deliveryLine(evs[2], rc.URL(), "[200]", ""))

	start := time.Now()
	assert.Equal(t, exitOK, l.stop(t))
	assert.Less(t, time.Since(start), 10*time.Second, "the retry's wait does not hold up Ctrl-C")
	assert.Regexp(t, `(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  stopped; 1 event\(s\) not delivered: `+evs[0].ID+regexp.QuoteMeta(replayLine(evs[0].CreatedAt))+"\n$", l.stdout.String())
	assert.Equal(t, 3, rc.requests())
}

// TestListenConnectionRefused: no receiver at the URL is shown as such.
func TestListenConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	target := "http://" + ln.Addr().String() + "/webhooks"
	ln.Close() // nothing listens there now

	f := startFake(t)
	l := startListen(t, f.env, "--forward-to", target, "--interval", "20ms", "--retries", "none")
	ev := triggerEvents(t, f, payments.EventAccountBalanceLow)[0]
	l.waitFor(t, regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  account.balance_low  `+ev.ID+`  --> POST `+regexp.QuoteMeta(target)+
		` \[ERR\] \d+ms dial tcp `+regexp.QuoteMeta(ln.Addr().String())+`: connect: connection refused \(attempt 1 of 1\)$`))
	l.waitFor(t, regexp.MustCompile(`(?m)  account.balance_low  `+ev.ID+`  gave up after 1 attempt`+regexp.QuoteMeta(replayLine(ev.CreatedAt))+`$`))
}

func TestOutcomeString(t *testing.T) {
	assert.Equal(t, "[200] 12ms", outcome{status: 200, took: 12400 * time.Microsecond}.String())
	assert.True(t, outcome{status: 204}.ok())
	assert.False(t, outcome{status: 302}.ok(), "a redirect is not a delivery")
	assert.False(t, outcome{status: 200, err: net.ErrClosed}.ok())
}
