package paymentstest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// waitReceived waits until the receiver has had n requests.
func waitReceived(t *testing.T, rc *receiver, n int) []delivery {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got := rc.deliveries(); len(got) >= n {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the receiver got %d requests, want %d", len(rc.deliveries()), n)
	return nil
}

func kindsOf(t *testing.T, ds []delivery) []string {
	t.Helper()
	var kinds []string
	for _, d := range ds {
		ev, err := payments.ParseEvent(d.body)
		require.NoError(t, err)
		kinds = append(kinds, string(ev.Type))
	}
	return kinds
}

// A failed event waits for its retry (an hour away) without holding up the
// next event: the engine that slept between retries inline never sent
// recipient.verified before the hour was up, so this test timed out on it.
func TestDeliveriesFailingEventDoesNotHoldUpTheNext(t *testing.T) {
	rc := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	srv, c := start(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: rc.URL, Secrets: []string{secret}}), paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Hour}}))
	createRecipient(t, c, "")
	got := waitReceived(t, rc, 2)
	assert.Equal(t, []string{"recipient.created", "recipient.verified"}, kindsOf(t, got))

	// The fake records an attempt once the receiver's answer is read, a
	// moment after the receiver saw the request.
	var log []paymentstest.Delivery
	deadline := time.Now().Add(20 * time.Second)
	for {
		log = srv.Deliveries()
		if len(log) == 2 && len(log[0].Attempts) == 1 && log[1].Status != paymentstest.DeliveryPending || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.Len(t, log, 2)
	assert.Equal(t, paymentstest.DeliveryPending, log[0].Status, "recipient.created waits for its retry")
	require.Len(t, log[0].Attempts, 1)
	assert.Equal(t, http.StatusBadGateway, log[0].Attempts[0].StatusCode)
	next := log[0].NextAttemptAt.Sub(log[0].Attempts[0].At)
	assert.InDelta(t, time.Hour.Seconds(), next.Seconds(), 60, "next retry an hour after the attempt")
	assert.Equal(t, paymentstest.DeliveryDelivered, log[1].Status)
	assert.True(t, log[1].NextAttemptAt.IsZero())
}

func TestDeliveriesKeepTheResponseBody(t *testing.T) {
	long := make([]byte, 3*paymentstest.ResponseBodyLimit)
	for i := range long {
		long[i] = 'x'
	}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write(append([]byte("nope:"), long...))
	}))
	t.Cleanup(rcv.Close)
	srv, c := start(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: rcv.URL, Secrets: []string{secret}}), paymentstest.WithWebhook(paymentstest.Webhook{NoRetries: true}))
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	a := srv.Deliveries()[0].Attempts[0]
	assert.Equal(t, http.StatusTeapot, a.StatusCode)
	assert.Len(t, a.ResponseBody, paymentstest.ResponseBodyLimit)
	assert.Equal(t, "nope:xxx", a.ResponseBody[:8])
}

func TestDeliveriesPauseAndResume(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, fastHooks(rc.URL)...)
	srv.PauseDeliveries()
	assert.True(t, srv.DeliveriesPaused())
	createRecipient(t, c, "")
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, srv.WaitForDeliveries(short), context.DeadlineExceeded, "paused: still pending")
	assert.Empty(t, rc.deliveries())
	for _, d := range srv.Deliveries() {
		assert.Equal(t, paymentstest.DeliveryPending, d.Status)
		assert.Empty(t, d.Attempts)
	}

	srv.ResumeDeliveries()
	waitDeliveries(t, srv)
	assert.Equal(t, []string{"recipient.created", "recipient.verified"}, kindsOf(t, rc.deliveries()))
}

// gate is a receiver that holds every request until released and counts
// how many it held at once.
type gate struct {
	mu            sync.Mutex
	inFlight, max int
	release       chan struct{}
}

func TestDeliveriesBoundedConcurrency(t *testing.T) {
	g := &gate{release: make(chan struct{})}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		g.mu.Lock()
		g.inFlight++
		g.max = max(g.max, g.inFlight)
		g.mu.Unlock()
		<-g.release
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	srv, c := start(t, paymentstest.WithWebhook(paymentstest.Webhook{URL: rcv.URL, Secrets: []string{secret}}), paymentstest.WithWebhookConcurrency(2))
	for range 3 {
		_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
		require.NoError(t, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		g.mu.Lock()
		n := g.inFlight
		g.mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(g.release)
	waitDeliveries(t, srv)
	assert.Equal(t, 2, g.max, "two attempts in flight at most, and two reached")
	for _, d := range srv.Deliveries() {
		assert.Equal(t, paymentstest.DeliveryDelivered, d.Status)
	}
}

func TestWithWebhookConcurrencyRefusesBadValues(t *testing.T) {
	for _, n := range []int{0, -1, 65} {
		_, err := paymentstest.StartServer(paymentstest.WithWebhookConcurrency(n))
		assert.ErrorContains(t, err, "WithSandbox: WebhookConcurrency", "n=%d", n)
	}
}

// TestDeliveriesRoundRobin: with three webhook URLs, the first attempts of
// deliveries go to each in turn; a failing receiver's delivery is retried
// at the URL after it, so replicas can be tried without a load balancer.
// Each attempt records where it went.
func TestDeliveriesRoundRobin(t *testing.T) {
	urlsOf := func(log []paymentstest.Delivery) [][]string {
		var out [][]string
		for _, dl := range log {
			var urls []string
			for _, a := range dl.Attempts {
				urls = append(urls, a.URL)
			}
			out = append(out, urls)
		}
		return out
	}
	t.Run("in turn", func(t *testing.T) {
		a, b, c := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
		srv, client := start(t, paymentstest.WithWebhook(paymentstest.Webhook{URLs: []string{a.URL, b.URL, c.URL}, Secrets: []string{secret}}))
		for range 6 {
			_, err := client.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
			require.NoError(t, err)
		}
		waitDeliveries(t, srv)
		assert.Equal(t, [][]string{{a.URL}, {b.URL}, {c.URL}, {a.URL}, {b.URL}, {c.URL}}, urlsOf(srv.Deliveries()))
		for _, rc := range []*receiver{a, b, c} {
			assert.Len(t, rc.deliveries(), 2)
			for _, d := range rc.deliveries() {
				checkSigned(t, d, secret)
			}
		}
	})
	t.Run("a retry goes to the next URL", func(t *testing.T) {
		failing := func(int) int { return http.StatusServiceUnavailable }
		a, b, c := newReceiver(t, nil), newReceiver(t, failing), newReceiver(t, nil)
		srv, client := start(t, paymentstest.WithWebhook(paymentstest.Webhook{URLs: []string{a.URL, b.URL, c.URL}, Secrets: []string{secret},
			Retries: []time.Duration{time.Millisecond, time.Millisecond}}))
		for range 3 {
			_, err := client.Webhooks.Trigger(ctx(t), payments.EventPaymentCompleted)
			require.NoError(t, err)
		}
		waitDeliveries(t, srv)
		log := srv.Deliveries()
		assert.Equal(t, [][]string{{a.URL}, {b.URL, c.URL}, {c.URL}}, urlsOf(log))
		for _, dl := range log {
			assert.Equal(t, paymentstest.DeliveryDelivered, dl.Status)
			assert.Equal(t, dl.Attempts[len(dl.Attempts)-1].URL, dl.URL, "a delivery's URL is its latest attempt's")
		}
		assert.Len(t, b.deliveries(), 1)
	})
	t.Run("refused", func(t *testing.T) {
		for name, w := range map[string]paymentstest.Webhook{
			"both":      {URL: "http://localhost:1/a", URLs: []string{"http://localhost:2/b"}},
			"not http":  {URLs: []string{"http://localhost:2/b", "mailto:ops@example.com"}},
			"empty one": {URLs: []string{"http://localhost:2/b", ""}},
		} {
			_, err := paymentstest.StartServer(paymentstest.WithWebhook(w))
			assert.Error(t, err, name)
		}
	})
}
