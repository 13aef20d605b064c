package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/webhook"
)

// queueRecorder is an EnqueueFunc's record: the ids it was called with, in
// order, and what it returns for the n-th call (1-based; nil: nil).
type queueRecorder struct {
	mu     sync.Mutex
	ids    []string
	result func(n int) error
}

func (q *queueRecorder) enqueue(_ context.Context, ev *payments.Event) error {
	q.mu.Lock()
	q.ids = append(q.ids, ev.ID)
	n := len(q.ids)
	result := q.result
	q.mu.Unlock()
	if result == nil {
		return nil
	}
	return result(n)
}

func (q *queueRecorder) calls() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.ids...)
}

// TestQueueHandlerHandsOff: a delivery is verified, parsed and handed to the
// EnqueueFunc, and answered 200 only once it returned nil; every duplicate
// reaches it (the queue dedupes), each answered 200; an error or a panic is
// answered 503 and the next delivery is handed off again; bad input is
// answered as by NewHandler without reaching the queue.
func TestQueueHandlerHandsOff(t *testing.T) {
	var q queueRecorder
	boom := errors.New("queue down")
	q.result = func(n int) error {
		switch n {
		case 4:
			return boom
		case 5:
			panic("enqueue panicked")
		}
		return nil
	}
	logs := new(testlog.Buffer)
	var results []webhook.DeliveryResult
	obs := func(ctx context.Context, _ *http.Request) (context.Context, func(webhook.DeliveryResult)) {
		return ctx, func(r webhook.DeliveryResult) { results = append(results, r) }
	}
	h := webhook.NewQueueHandler(whVerifier(t, whSecret), q.enqueue, webhook.WithMaxBodyBytes(4096),
		webhook.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))), webhook.WithDeliveryObserver(obs))

	for range 3 {
		assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
	}
	assert.Equal(t, []string{whEventID, whEventID, whEventID}, q.calls(), "every duplicate reaches the queue")
	assert.Equal(t, http.StatusServiceUnavailable, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code, "an enqueue error")
	assert.Equal(t, http.StatusServiceUnavailable, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code, "a panic")
	assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code, "the redelivery is handed off again")
	require.Len(t, q.calls(), 6)
	require.Len(t, results, 6)
	assert.Equal(t, webhook.OutcomeEnqueued, results[0].Outcome)
	assert.Equal(t, payments.EventPaymentCompleted, results[0].EventType)
	assert.Equal(t, webhook.OutcomeStoreUnavailable, results[3].Outcome)
	assert.ErrorIs(t, results[3].Err, boom)
	assert.ErrorContains(t, results[4].Err, "enqueue panicked")
	assert.Contains(t, logs.String(), `"msg":"event enqueued"`)
	assert.Contains(t, logs.String(), `"stack":`, "a panic is logged with its stack")

	bad := whDelivery(whPayload(), whNow, "whsec_someone_else")
	assert.Equal(t, http.StatusUnauthorized, whServe(h, bad).Code)
	assert.Equal(t, http.StatusBadRequest, whServe(h, whDelivery([]byte(`{"no":"event"}`), whNow, whSecret)).Code)
	assert.Equal(t, http.StatusMethodNotAllowed, whServe(h, httptest.NewRequest(http.MethodGet, "/webhooks", nil)).Code)
	big := bytes.Repeat([]byte(" "), 5000)
	assert.Equal(t, http.StatusRequestEntityTooLarge, whServe(h, whDelivery(append(whPayload(), big...), whNow, whSecret)).Code)
	assert.Len(t, q.calls(), 6, "nothing refused reaches the queue")
	assert.Equal(t, webhook.OutcomeRejectedSignature, results[6].Outcome)
}

// TestQueueHandlerAnswersAfterEnqueue: the 200 is written only after the
// EnqueueFunc returned; Shutdown waits for the enqueue in flight and
// refuses new deliveries with 503 meanwhile.
func TestQueueHandlerAnswersAfterEnqueue(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	h := webhook.NewQueueHandler(whVerifier(t, whSecret), func(context.Context, *payments.Event) error {
		close(entered)
		<-release
		return nil
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	answered := make(chan int, 1)
	go func() {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhooks", bytes.NewReader(whPayload()))
		if err != nil {
			answered <- 0
			return
		}
		req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(whPayload(), whNow, whSecret))
		resp, err := srv.Client().Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- h.Shutdown(context.Background()) }()
	// Shutdown is under way once a new delivery is refused.
	require.Eventually(t, func() bool {
		return whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code == http.StatusServiceUnavailable
	}, time.Minute, time.Millisecond)
	select {
	case code := <-answered:
		t.Fatalf("answered %d before the enqueue returned", code)
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with an enqueue in flight", err)
	default:
	}
	close(release)
	assert.Equal(t, http.StatusOK, <-answered)
	assert.NoError(t, <-shut)
}

// TestQueueHandlerRefusesClaimOptions: a handler that hands off claims
// nothing, so a ClaimStore or a claim wait given to it is a programming
// error, caught when it is made, as a nil verifier or function is; it
// never calls a store.
func TestQueueHandlerRefusesClaimOptions(t *testing.T) {
	v := whVerifier(t, whSecret)
	var q queueRecorder
	store := &countingClaimStore{ClaimStore: webhook.NewMemoryClaimStore(10)}
	assert.PanicsWithValue(t, "webhook: NewQueueHandler with WithClaimStore or WithClaimWait: a handler that hands off claims nothing, "+
		"your queue dedupes by event id; drop the option, or use NewHandler to run a function during the delivery",
		func() { webhook.NewQueueHandler(v, q.enqueue, webhook.WithClaimStore(store)) })
	assert.Panics(t, func() { webhook.NewQueueHandler(v, q.enqueue, webhook.WithClaimWait(0)) })
	assert.PanicsWithValue(t, "webhook: NewQueueHandler with a nil Verifier", func() { webhook.NewQueueHandler(nil, q.enqueue) })
	assert.PanicsWithValue(t, "webhook: NewQueueHandler with a nil EnqueueFunc", func() { webhook.NewQueueHandler(v, nil) })
	h := webhook.NewQueueHandler(v, q.enqueue, webhook.WithClaimStore(nil), webhook.WithClaimWait(-1)) // the defaults: no-ops
	assert.Equal(t, http.StatusOK, whServe(h, whDelivery(whPayload(), whNow, whSecret)).Code)
	assert.Zero(t, store.calls.Load(), "no store call")
}

// countingClaimStore counts the calls made to a ClaimStore.
type countingClaimStore struct {
	webhook.ClaimStore
	calls atomic.Int64
}

func (s *countingClaimStore) Claim(ctx context.Context, id string) (webhook.Claim, error) {
	s.calls.Add(1)
	return s.ClaimStore.Claim(ctx, id)
}

// TestQueueHandlerReconcile: Reconcile hands each listed event to the
// EnqueueFunc, counts it Enqueued, moves the checkpoint over it, and
// counts an enqueue error in Failed, the checkpoint staying before it.
func TestQueueHandlerReconcile(t *testing.T) {
	evs := rcEvents(t, 4)
	var q queueRecorder
	q.result = func(n int) error {
		if n == 3 {
			return errors.New("queue down")
		}
		return nil
	}
	logs := new(testlog.Buffer)
	h := webhook.NewQueueHandler(whVerifier(t, whSecret), q.enqueue, webhook.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	res, err := h.Reconcile(context.Background(), rcList(evs, nil, nil))
	require.NoError(t, err)
	assert.Equal(t, webhook.ReconcileResult{Enqueued: 3, Failed: 1, FailedIDs: []string{evs[2].ID}, Checkpoint: rcAt(evs[1])}, res)
	assert.Equal(t, []string{evs[0].ID, evs[1].ID, evs[2].ID, evs[3].ID}, q.calls())
	assert.Len(t, rcLines(t, logs, "event enqueued by reconcile"), 3)
	assert.Len(t, rcLines(t, logs, "reconcile: the event could not be enqueued; left for the next delivery or reconcile"), 1)

	require.NoError(t, h.Shutdown(context.Background()))
	_, err = h.Reconcile(context.Background(), rcList(evs, nil, nil))
	assert.ErrorIs(t, err, webhook.ErrShutdown)
	assert.Len(t, q.calls(), 4)
}

// TestHandOffPathFiles: the project files one delivery handed off crosses
// (issue 46: at most 8 from the request to the merchant's commit, none of
// them claim or lease code), read from what ran: testdata/handoffpath,
// built with coverage, serves a first delivery, clears its counters,
// serves a second and writes the counters of that one alone. Without a
// logger or an observer it crosses serve.go, signature.go and the
// event's parse (events.go, envelope.go); with them, the surprise scan
// too (surprise.go, internal/surprise). The package doc lists them.
func TestHandOffPathFiles(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "handoffpath")
	build := exec.Command("go", "build", "-cover", "-covermode=atomic", "-coverpkg=github.com/paymentsapi/payments-go/...", "-o", bin, "./testdata/handoffpath")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	const module = "github.com/paymentsapi/payments-go/"
	crossed := func(t *testing.T, args ...string) []string {
		counters, exitDir := t.TempDir(), t.TempDir()
		run := exec.Command(bin, append([]string{counters}, args...)...)
		run.Env = append(os.Environ(), "GOCOVERDIR="+exitDir)
		out, err := run.CombinedOutput()
		require.NoError(t, err, "%s", out)
		text := filepath.Join(t.TempDir(), "cover.txt")
		out, err = exec.Command("go", "tool", "covdata", "textfmt", "-i="+counters, "-o="+text).CombinedOutput()
		require.NoError(t, err, "%s", out)
		profile, err := os.ReadFile(text)
		require.NoError(t, err)
		files := map[string]bool{}
		for _, line := range strings.Split(string(profile), "\n")[1:] {
			// file:start.col,end.col statements count
			fields := strings.Fields(line)
			if len(fields) != 3 || fields[2] == "0" {
				continue
			}
			file, _, _ := strings.Cut(fields[0], ":")
			if file = strings.TrimPrefix(file, module); !strings.HasPrefix(file, "webhook/testdata/") {
				files[file] = true
			}
		}
		return slices.Sorted(maps.Keys(files))
	}
	t.Run("plain", func(t *testing.T) {
		assert.Equal(t, []string{"envelope.go", "events.go", "webhook/serve.go", "webhook/signature.go"}, crossed(t))
	})
	t.Run("logger and observer", func(t *testing.T) {
		assert.Equal(t, []string{"envelope.go", "events.go", "internal/surprise/surprise.go",
			"webhook/serve.go", "webhook/signature.go", "webhook/surprise.go"}, crossed(t, "observed"))
	})
}
