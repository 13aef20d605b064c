// Package storetest proves the shared-database claim stores and outcome stores against real
// servers: the same suite runs on every store, through the handler that
// merchants use (webhook.Handler), with several replicas, dead
// replicas and a server that goes down. Only the stores' tests import it.
package storetest

import (
	"github.com/paymentsapi/payments-go/internal/testhook"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// Backend makes stores of one kind for the suite.
type Backend struct {
	// Stores returns n stores, each with its own connection pool as a
	// replica would have, over one namespace (table, key prefix) of
	// the shared server that no other test uses, with the given lease (0:
	// the store's default).
	Stores func(t testing.TB, n int, lease time.Duration) Fixture
	// Outage is like Stores, but on a server of the test's own, which it
	// may stop and start again.
	Outage func(t testing.TB, n int, lease time.Duration) (Fixture, Server)
	// Proxied is like Stores, but the stores reach the shared server
	// through a proxy that can hold every byte (a silent partition).
	Proxied func(t testing.TB, n int, lease time.Duration) (Fixture, *testservers.Proxy)
}

// Fixture is stores over one namespace, and a look into it.
type Fixture struct {
	Stores []webhook.ClaimStore
	// TTL is how long the stored claim or completion of id has left, by
	// the server's clock.
	TTL func(id string) time.Duration
	// Expire makes the stored claim or completion of id expire now.
	Expire func(id string)
	// Replica returns one more store over the same namespace, on a pool
	// (client) of its own whose connections are made by dial: a replica
	// that the fault matrix can kill.
	Replica func(dial Dialer) webhook.ClaimStore
}

// Dialer makes a store's connections (pgx's DialFunc, go-redis' Dialer).
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// Server is a server a test may stop and start again.
type Server interface {
	Stop(testing.TB)
	Start(testing.TB)
	// Freeze stops the server's processes (SIGSTOP); Thaw resumes them.
	Freeze(testing.TB)
	Thaw(testing.TB)
	// Password is in the server's URL: it must never be logged.
	Password() string
}

// Secret signs the suite's deliveries.
const Secret = "whsec_storetest_Vq83xLm2Pz"

// Verifier verifies what Sign signs.
func Verifier(tb testing.TB) *webhook.SignatureVerifier {
	tb.Helper()
	v, err := webhook.NewSignatureVerifier([]string{Secret})
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// NewEventID returns a random event id, as the service makes them.
func NewEventID(tb testing.TB) string {
	id, err := uuid.NewRandom()
	if err != nil {
		tb.Fatal(err)
	}
	return id.String()
}

// EventBody is a payment.completed event with the given id.
func EventBody(id string) []byte {
	ref := "order-" + id[:8]
	return []byte(`{"id":"` + id + `","event":"payment.completed","created_at":"` +
		time.Now().UTC().Format(time.RFC3339) + `","data":{"id":"pay-` + id[:8] +
		`","reference":"` + ref + `","status":"completed","amount":"1500.00","currency":"NGN"}}`)
}

// Deliver signs body now and posts it to h, as the service would, and
// returns the status.
func Deliver(h http.Handler, body []byte) int {
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(body, time.Now(), Secret))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// Answers counts the statuses of deliveries as they are answered.
type Answers struct {
	mu     sync.Mutex
	counts map[int]int
}

// Add counts one answer.
func (a *Answers) Add(status int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.counts == nil {
		a.counts = map[int]int{}
	}
	a.counts[status]++
}

// Count returns how many answers had status.
func (a *Answers) Count(status int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts[status]
}

// String lists the counts.
// snapshot returns a copy of the counts by status.
func (a *Answers) snapshot() map[int]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := make(map[int]int, len(a.counts))
	for c, n := range a.counts {
		m[c] = n
	}
	return m
}

func (a *Answers) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return fmt.Sprint(a.counts)
}

// Retry delivers body through next() (the next replica of a round-robin)
// until it is answered 200, waiting between attempts with a growing
// back-off up to maxBackoff, as the service retries, and counts every
// answer in answers. It gives up after limit, or when ctx is done.
func Retry(ctx context.Context, next func() http.Handler, body []byte, answers *Answers, maxBackoff, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	backoff := time.Millisecond
	for attempts := 1; ; attempts++ {
		code := Deliver(next(), body)
		answers.Add(code)
		if code == http.StatusOK {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no 200 after %v and %d attempts, the last answered %d", limit, attempts, code)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// Logs captures what handlers log, as JSON lines.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Logger returns a logger that writes into l at debug level and above.
func (l *Logs) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Write implements io.Writer for the logger.
func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String is everything logged.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Records returns the logged records whose message starts with msg.
func (l *Logs) Records(tb testing.TB, msg string) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			tb.Fatalf("log line %q: %v", line, err)
		}
		if m, _ := r["msg"].(string); strings.HasPrefix(m, msg) {
			out = append(out, r)
		}
	}
	return out
}

// Ledger counts, per event id, the calls of an EventFunc and the ones that
// succeeded.
type Ledger struct {
	mu        sync.Mutex
	calls     map[string]int
	successes map[string]int
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{calls: map[string]int{}, successes: map[string]int{}}
}

// Call records a call for id and returns how many there were, this one
// included.
func (l *Ledger) Call(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls[id]++
	return l.calls[id]
}

// Succeed records a success for id.
func (l *Ledger) Succeed(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.successes[id]++
}

// Calls and Successes return the counts for id.
func (l *Ledger) Calls(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[id]
}

// Successes returns how many calls for id succeeded.
func (l *Ledger) Successes(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.successes[id]
}

// TotalSuccesses returns the successes of every id.
func (l *Ledger) TotalSuccesses() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.successes {
		n += s
	}
	return n
}

// NoRecentlyDone makes a handler remember no processed event, so that every
// delivery reaches the store (internal/testhook: the webhook package's
// default of DefaultRecentlyDone has no option).
func NoRecentlyDone() webhook.HandlerOption {
	return testhook.HandlerRecentlyDone(0).(webhook.HandlerOption)
}
