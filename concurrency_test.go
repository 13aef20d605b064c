package payments_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

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
		return jsonResponder(200, okEnvelope(`{"id":"p-`+ref+`","reference":"`+ref+`","amount":"1","currency":"NGN",
			"quote":{"quote_id":"q-`+ref+`","fee":"0.5"}}`))(req)
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
		assert.Equal(t, "q-"+ref, got[i].Quote.ID)
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
	b, err := payments.NewClient(keyB, payments.WithBaseURL(harnessBase), payments.WithHTTPClient(shared), payments.WithMaxRetries(0))
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
