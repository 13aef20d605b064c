package paymentstest_test

import (
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// serverGoroutines lists the stacks of goroutines running the package's
// code, other than the tests themselves.
func serverGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "payments-go/paymentstest.") && !strings.Contains(g, "paymentstest_test.") {
			out = append(out, g)
		}
	}
	return out
}

func TestCloseStopsEverything(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusInternalServerError })
	before := runtime.NumGoroutine()

	// Default retry waits (1s, 2s, ...) so that deliveries are mid-back-off.
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: rc.URL, Secrets: []string{secret}}))
	c := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	createRecipient(t, c, "")
	va, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), dec("10"), "")
	require.NoError(t, err)
	require.NotEmpty(t, serverGoroutines())

	// A request sleeping in its latency when Close comes.
	srv.SetLatency(time.Hour)
	slow := make(chan error, 1)
	go func() {
		_, err := c.Recipients.Create(ctx(t), recipientParams())
		slow <- err
	}()
	// Wait for the request to sleep in its latency (the deliveries' own
	// goroutines come and go, so a count of goroutines proves nothing).
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(serverGoroutines(), func(g string) bool { return strings.Contains(g, "(*Server).pause") })
	}, 10*time.Second, time.Millisecond)

	begin := time.Now()
	srv.Close()
	assert.Less(t, time.Since(begin), 2*time.Second, "Close does not wait out latency or back-off")
	var apiErr *payments.APIError
	require.ErrorAs(t, <-slow, &apiErr)
	assert.Equal(t, "shutting_down", string(apiErr.Code))
	srv.Close() // again: nothing happens

	rc.Close()
	require.Eventually(t, func() bool {
		return len(serverGoroutines()) == 0 && runtime.NumGoroutine() <= before
	}, 3*time.Second, 10*time.Millisecond, "left behind: %v", serverGoroutines())

	assert.NotEmpty(t, srv.Deliveries(), "the logs stay readable")
	_, err = c.Recipients.Create(ctx(t), recipientParams())
	require.Error(t, err, "a closed server answers nothing")
}
