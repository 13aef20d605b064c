package payments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

func TestOneClientManyGoroutines(t *testing.T) {
	const workers = 32
	h := newHarness(t)
	// Each reference is answered with a payment that echoes it; every third
	// call is made to retry once first.
	var mu sync.Mutex
	seenOnce := map[string]bool{}
	h.on(http.MethodPost, "/payments/initiate", func(req *http.Request) (*http.Response, error) {
		ref := req.Header.Get("X-Ref")
		mu.Lock()
		first := !seenOnce[ref]
		seenOnce[ref] = true
		mu.Unlock()
		if first && strings.HasSuffix(ref, "0") {
			return jsonResponder(503, errorEnvelope("busy"))(req)
		}
		return jsonResponder(200, okEnvelope(`{"id":"p-`+ref+`","reference":"`+ref+`","status":"pending","amount":"15000.50","currency":"NGN",
			"quote":{"quote_id":"q-`+ref+`","fee":"0.5","exchange_rate":"1","total_amount":"15001"}}`))(req)
	})

	var wg sync.WaitGroup
	errs := make([]error, workers)
	got := make([]*payments.Payment, workers)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ref := fmt.Sprintf("order-%d", i)
			p := validInitiateParams()
			p.Reference = ref
			got[i], errs[i] = h.client.Payments.Initiate(context.Background(), p, payments.WithHeader("X-Ref", ref))
		}(i)
	}
	wg.Wait()

	keys := map[string]bool{}
	retried := 0
	for i := 0; i < workers; i++ {
		require.NoError(t, errs[i])
		ref := fmt.Sprintf("order-%d", i)
		assert.Equal(t, ref, got[i].Reference)
		assert.Equal(t, "q-"+ref, got[i].Quote.QuoteID)
		keys[got[i].LastResponse().IdempotencyKey] = true
		if strings.HasSuffix(ref, "0") {
			assert.Equal(t, 2, got[i].LastResponse().Attempts, ref)
			retried++
		} else {
			assert.Equal(t, 1, got[i].LastResponse().Attempts, ref)
		}
	}
	assert.Len(t, keys, workers, "every call has its own key")
	assert.Equal(t, workers+retried, h.calls())

	// Every attempt of one call carried that call's key, never another's.
	byRef := map[string]map[string]bool{}
	for _, r := range h.requests() {
		ref := r.Header.Get("X-Ref")
		if byRef[ref] == nil {
			byRef[ref] = map[string]bool{}
		}
		byRef[ref][r.Header.Get("Idempotency-Key")] = true
	}
	for ref, ks := range byRef {
		assert.Len(t, ks, 1, ref)
	}
}

func TestTwoClientsTwoKeys(t *testing.T) {
	const keyA, keyB = "sk_test_MerchantAlpha", "sk_test_MerchantBravo"
	mt := httpmock.NewMockTransport()
	var mu sync.Mutex
	auths := map[string]int{}
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		auths[req.Header.Get("Authorization")+" "+req.Header.Get("X-Client")]++
		mu.Unlock()
		return jsonResponder(201, okEnvelope(recipientJSON))(req)
	})
	shared := &http.Client{Transport: mt}
	a, err := payments.NewClient(keyA, payments.WithBaseURL(harnessBase), payments.WithHTTPClient(shared), payments.WithUserAgent("alpha/1"))
	require.NoError(t, err)
	b, err := payments.NewClient(keyB, payments.WithBaseURL(harnessBase), payments.WithHTTPClient(shared), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)

	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		for name, c := range map[string]*payments.Client{"A": a, "B": b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.Recipients.Create(context.Background(), validRecipientParams(), payments.WithHeader("X-Client", name))
				assert.NoError(t, err)
			}()
		}
	}
	wg.Wait()
	assert.Equal(t, map[string]int{
		"Bearer " + keyA + " A": 16,
		"Bearer " + keyB + " B": 16,
	}, auths)
}

func TestDefaultTransportUnderConcurrency(t *testing.T) {
	// The default client against a real loopback server: many goroutines,
	// all answered, with connections reused.
	var mu sync.Mutex
	remotes := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		remotes[r.RemoteAddr] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, okEnvelope(recipientJSON))
	}))
	defer srv.Close()
	c, err := payments.NewClient(harnessKey, payments.WithBaseURL(srv.URL))
	require.NoError(t, err)

	const workers, rounds = 16, 5
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < rounds; j++ {
				_, err := c.Recipients.Create(context.Background(), validRecipientParams())
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	// With net/http's default of 2 idle connections per host most requests
	// would dial anew; the SDK's pool keeps about one connection per worker.
	assert.LessOrEqual(t, len(remotes), 2*workers, "connections are pooled and reused, not one per request")
}

// poolRun makes calls calls from 16 goroutines through one Client with the
// default transport, failing every failEvery-th with 503 on every attempt
// (0: none), and returns how many connections the server accepted.
func poolRun(tb testing.TB, calls, failEvery int) int64 {
	tb.Helper()
	var newConns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Header.Get("X-Test-Fail") != "" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"message":"ok","stan":"s","data":{}}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := payments.NewClient("sk_test_pool", payments.WithBaseURL(srv.URL),
		payments.WithRetries(payments.RetryPolicy{MaxAttempts: 2}), payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}))
	require.NoError(tb, err)
	defer c.Close()

	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1)
				if n > int64(calls) {
					return
				}
				var opts []payments.RequestOption
				if failEvery > 0 && n%int64(failEvery) == 0 {
					opts = append(opts, payments.WithHeader("X-Test-Fail", "1"))
				}
				_, err := c.Do(context.Background(), http.MethodGet, "/pool", nil, nil, opts...)
				if failEvery > 0 && n%int64(failEvery) == 0 {
					var apiErr *payments.APIError
					if assert.ErrorAs(tb, err, &apiErr) {
						assert.Equal(tb, http.StatusServiceUnavailable, apiErr.StatusCode)
					}
				} else {
					assert.NoError(tb, err)
				}
			}
		}()
	}
	wg.Wait()
	return newConns.Load()
}

// TestFailedCallsKeepThePool: go-retryablehttp closes the idle connections of
// its client whenever a call ends in an error. With a shared pool that made
// a burst of failures multiply new connections during an outage; the SDK
// hides the transport's CloseIdleConnections from it.
func TestFailedCallsKeepThePool(t *testing.T) {
	healthy := poolRun(t, 800, 0)
	failing := poolRun(t, 800, 10)
	t.Logf("new connections: %d without failures, %d with 1 call in 10 failing", healthy, failing)
	assert.LessOrEqual(t, failing, 2*max(healthy, 16), "failed calls must not empty the shared pool")
}

// TestCloseClosesIdleConnections: Client.Close empties the pool of the
// transport NewClient made, and the Client still works afterwards.
func TestCloseClosesIdleConnections(t *testing.T) {
	var newConns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"success":true,"data":{}}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := payments.NewClient("sk_test_pool", payments.WithBaseURL(srv.URL))
	require.NoError(t, err)
	for range 3 {
		_, err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil)
		require.NoError(t, err)
	}
	assert.EqualValues(t, 1, newConns.Load(), "one kept-alive connection")
	require.NoError(t, c.Close())
	_, err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 2, newConns.Load(), "Close dropped the idle connection")
}

// TestReusedCallsLeaveEveryAnswerIntact: a Client reuses the state of a call
// that succeeded for a later call (client.go, Client.reuse). Many calls run
// at once through one Client and a real connection pool, some retried after
// a 503; every answer is kept until all have ended, then each must still be
// its own call's: the reference, the quote, the raw JSON, the idempotency key
// the server saw, the attempts. Under -race, any memory of a call that a
// later call reuses while an earlier answer, net/http or the trace still
// reads it is reported.
func TestReusedCallsLeaveEveryAnswerIntact(t *testing.T) {
	const workers, perWorker = 8, 25
	var mu sync.Mutex
	first := map[string]bool{} // references already answered with a 503
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		ref := gjsonString(body, "reference")
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		retry := strings.HasSuffix(ref, "3") && !first[ref]
		first[ref] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if retry {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, errorEnvelope("busy"))
			return
		}
		// The stan echoes the key the server received.
		_, _ = io.WriteString(w, `{"success":true,"message":"ok","stan":"`+key+`","data":{"id":"p-`+ref+`","reference":"`+ref+
			`","status":"pending","amount":"15000.50","currency":"NGN","quote":{"quote_id":"q-`+ref+`","fee":"0.5","exchange_rate":"1","total_amount":"15001"}}}`)
	}))
	defer srv.Close()
	c, err := payments.NewClient("sk_test_reuse", payments.WithBaseURL(srv.URL),
		payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}))
	require.NoError(t, err)
	defer c.Close()

	type answer struct {
		ref string
		p   *payments.Payment
		err error
	}
	answers := make([][]answer, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				p := validInitiateParams()
				p.Reference = fmt.Sprintf("order-%d-%d", w, i)
				got, err := c.Payments.Initiate(context.Background(), p)
				answers[w] = append(answers[w], answer{p.Reference, got, err})
			}
		}()
	}
	wg.Wait()

	keys := map[string]bool{}
	for _, as := range answers {
		require.Len(t, as, perWorker)
		for _, a := range as {
			require.NoError(t, a.err, a.ref)
			r := a.p.LastResponse()
			assert.Equal(t, a.ref, a.p.Reference)
			assert.Equal(t, "p-"+a.ref, a.p.ID)
			assert.Equal(t, "q-"+a.ref, a.p.Quote.QuoteID)
			assert.Contains(t, string(a.p.RawJSON()), `"reference":"`+a.ref+`"`)
			assert.Equal(t, r.IdempotencyKey, r.Stan, "the server received the key this answer reports")
			assert.Contains(t, string(r.Body), `"stan":"`+r.IdempotencyKey+`"`)
			assert.False(t, keys[r.IdempotencyKey], "each call has a key of its own")
			keys[r.IdempotencyKey] = true
			want := 1
			if strings.HasSuffix(a.ref, "3") {
				want = 2
			}
			assert.Equal(t, want, r.Attempts, a.ref)
		}
	}
}

// TestReusedCallsSurviveAnAnswerBeforeTheBody: a server that answers before
// reading the request leaves net/http still writing the body (and about to
// call the trace that counts the writes) after the call has its answer and
// has ended. The next calls reuse the call's state at once: the body's reader,
// the Idempotency-Key header and the trace must not be part of what is
// reused (request.Call's wire). Under -race, a reused reader or trace is
// reported; without it, each call must still get its own answer and key.
func TestReusedCallsSurviveAnAnswerBeforeTheBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Answer at once, the body unread: the server closes the
		// connection after the answer, and the client's write fails late.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"stan":"`+r.Header.Get("Idempotency-Key")+`","data":{}}`)
	}))
	defer srv.Close()
	c, err := payments.NewClient("sk_test_early", payments.WithBaseURL(srv.URL))
	require.NoError(t, err)
	defer c.Close()
	big := strings.Repeat("x", 4<<20) // more than the socket buffers take
	for i := range 6 {
		key := fmt.Sprintf("early-%d", i)
		r, err := c.Do(context.Background(), http.MethodPost, "/x", map[string]string{"pad": big}, nil, payments.WithIdempotencyKey(key))
		require.NoError(t, err, i)
		assert.Equal(t, key, r.IdempotencyKey)
		assert.Equal(t, key, r.Stan, "the server received this call's key")
	}
}

// gjsonString is the string member name of the JSON object body ("" when
// absent).
func gjsonString(body []byte, name string) string {
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	s, _ := m[name].(string)
	return s
}
