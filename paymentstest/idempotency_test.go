package paymentstest_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

const rawRecipient = `{"account_number":"0123456789","account_name":"Ada","account_type":"individual","account_currency":"NGN"}`

func TestIdempotentReplayIsByteExact(t *testing.T) {
	srv, _ := start(t)
	key := map[string]string{"Idempotency-Key": "create-ada"}
	first := send(t, srv, http.MethodPost, "/payments/recipients", rawRecipient, key)
	require.Equal(t, http.StatusCreated, first.status)
	srv.Advance(time.Hour) // a replay is the first answer, not a new one

	// Same JSON value with other key order and spacing.
	reordered := `{ "account_type":"individual", "account_currency":"NGN",
		"account_name":"Ada", "account_number":"0123456789" }`
	second := send(t, srv, http.MethodPost, "/payments/recipients", reordered, key)
	assert.Equal(t, first.status, second.status)
	assert.Equal(t, first.body, second.body, "the same bytes, stan included")
	assert.Equal(t, "true", second.header.Get("Idempotent-Replayed"))
	assert.Empty(t, first.header.Get("Idempotent-Replayed"))
	assert.Len(t, srv.Recipients(), 1)
	assert.Len(t, srv.Events(), 2, "created and verified, once")

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.False(t, reqs[0].Replayed)
	assert.True(t, reqs[1].Replayed)
	assert.Equal(t, reqs[0].Stan, reqs[1].Stan)

	// An answer that was an error is replayed too.
	bad := send(t, srv, http.MethodPost, "/payments/recipients", `{}`, map[string]string{"Idempotency-Key": "bad"})
	again := send(t, srv, http.MethodPost, "/payments/recipients", `{}`, map[string]string{"Idempotency-Key": "bad"})
	assert.Equal(t, bad.body, again.body)
}

func TestIdempotencyKeyReuse(t *testing.T) {
	srv, c := start(t)
	r, err := c.Recipients.Create(ctx(t), recipientParams(), payments.WithIdempotencyKey("k1"))
	require.NoError(t, err)

	other := recipientParams()
	other.AccountName = "Someone Else"
	_, err = c.Recipients.Create(ctx(t), other, payments.WithIdempotencyKey("k1"))
	require.ErrorIs(t, err, payments.ErrUnprocessable)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "idempotency_key_reused", string(apiErr.Code))
	assert.Len(t, srv.Recipients(), 1)

	// Keys are scoped per endpoint: the same key on initiate is new.
	p, err := c.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: dec("5")}, Currency: "NGN", RecipientID: r.ID, Reference: "o"},
		payments.WithIdempotencyKey("k1"))
	require.NoError(t, err)

	// The SDK replays the same call: same payment, no second one.
	again, err := c.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: dec("5")}, Currency: "NGN", RecipientID: r.ID, Reference: "o"},
		payments.WithIdempotencyKey("k1"))
	require.NoError(t, err)
	assert.Equal(t, p.ID, again.ID)
	assert.Equal(t, p.LastResponse().Stan, again.LastResponse().Stan)
	assert.Len(t, srv.Payments(), 1)
}

func TestIdempotencyKeyValidation(t *testing.T) {
	srv, _ := start(t)
	res := send(t, srv, http.MethodPost, "/payments/recipients", rawRecipient, map[string]string{"Idempotency-Key": strings.Repeat("k", 256)})
	assert.Equal(t, http.StatusBadRequest, res.status)
	assert.Equal(t, "invalid_idempotency_key", res.env.Code)
	assert.Empty(t, srv.Recipients())
}

func TestIdempotencyKeysExpire(t *testing.T) {
	srv, _ := start(t)
	key := map[string]string{"Idempotency-Key": "old"}
	first := send(t, srv, http.MethodPost, "/payments/recipients", rawRecipient, key)
	srv.Advance(24 * time.Hour)
	second := send(t, srv, http.MethodPost, "/payments/recipients", rawRecipient, key)
	assert.NotEqual(t, first.env.Stan, second.env.Stan)
	assert.Len(t, srv.Recipients(), 2, "a key is remembered for 24 hours of server time")
}

func TestIdempotencyInProgress(t *testing.T) {
	srv, _ := start(t)
	srv.SetLatency(300 * time.Millisecond)
	key := map[string]string{"Idempotency-Key": "slow"}
	var wg sync.WaitGroup
	wg.Add(1)
	var first *rawResponse
	go func() {
		defer wg.Done()
		first = send(t, srv, http.MethodPost, "/payments/recipients", rawRecipient, key)
	}()
	time.Sleep(50 * time.Millisecond) // the first request is now in its latency
	require.Empty(t, srv.Requests(), "the first request has not finished")
	busy := send(t, srv, http.MethodPost, "/payments/recipients", rawRecipient, key)
	assert.Equal(t, http.StatusConflict, busy.status)
	assert.Equal(t, "idempotency_in_progress", busy.env.Code)
	mismatch := send(t, srv, http.MethodPost, "/payments/recipients", `{"account_name":"x"}`, key)
	assert.Equal(t, "idempotency_key_reused", mismatch.env.Code, "another body is refused even while running")
	wg.Wait()
	assert.Equal(t, http.StatusCreated, first.status)
	assert.Len(t, srv.Recipients(), 1)
}

func TestConcurrentSameKeyCreatesOnce(t *testing.T) {
	srv, _ := start(t)
	// 40 callers retrying one key up to 20 times each is the storm a
	// client's retry budget stops; this test is about the server's side.
	c := srv.Client(payments.WithRetries(payments.RetryPolicy{MaxAttempts: 21}), payments.WithRetryBudget(nil))
	r := createRecipient(t, c, "")
	srv.SetLatency(50 * time.Millisecond) // a window wide enough, even under -race on a busy machine, for 409s to happen

	const n = 40
	params := &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: dec("75.25")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-c"}
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := c.Payments.Initiate(ctx(t), params, payments.WithIdempotencyKey("order-c"))
			errs[i] = err
			if err == nil {
				ids[i] = p.ID
			}
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, ids[0], ids[i])
	}
	assert.Len(t, srv.PaymentsByReference("order-c"), 1)
	assert.Equal(t, 1, countEvents(srv, payments.EventPaymentInitiated))
	conflicts := 0
	for _, rec := range srv.Requests() {
		if rec.StatusCode == http.StatusConflict {
			conflicts++
		}
	}
	assert.Positive(t, conflicts, "some requests met the first one still running")
}

func TestAbandonedRequestReleasesKey(t *testing.T) {
	srv, c := start(t)
	srv.SetLatency(200 * time.Millisecond)
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Recipients.Create(short, recipientParams(), payments.WithIdempotencyKey("gone"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, time.Second, 5*time.Millisecond)
	assert.Empty(t, srv.Recipients(), "the client left during the wait: nothing was done")

	srv.SetLatency(0)
	_, err = c.Recipients.Create(ctx(t), recipientParams(), payments.WithIdempotencyKey("gone"))
	require.NoError(t, err)
	assert.Len(t, srv.Recipients(), 1)
}
