package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/testservers"
)

// The tests run PostgreSQL: PAYMENTS_TEST_POSTGRES_URL when set, else a
// throwaway server of the Debian binaries (apt-get install postgresql);
// without either they skip unless PAYMENTS_TEST_REQUIRE_SERVERS=1. With
// childArgs set, the test binary is a process of the example instead
// (startChild), so that a test can SIGKILL or SIGTERM a real worker.
func TestMain(m *testing.M) {
	if args := os.Getenv(childArgs); args != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, strings.Fields(args), os.Getenv, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(testservers.Main(m))
}

// callTime is how long the merchant's call takes in the tests: long
// against a delivery's enqueue, so that an answer or an Await that waited
// for the function would show.
const callTime = 2 * time.Second

// testDB creates a database of its own for the test (River's tables and
// the queue are per database) and returns its URL.
func testDB(t *testing.T) string {
	t.Helper()
	base := testservers.SharedPostgres(t).URL()
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "pgqueue_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)") })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// calls records when each event's call ended, in the worker, before its
// transaction commits.
type calls struct {
	mu    sync.Mutex
	ended map[string]time.Time
}

func (c *calls) fn() func(context.Context, *payments.Event) error {
	wait := pause(callTime)
	return func(ctx context.Context, ev *payments.Event) error {
		if err := wait(ctx, ev); err != nil {
			return err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.ended == nil {
			c.ended = map[string]time.Time{}
		}
		c.ended[ev.ID] = time.Now()
		return nil
	}
}

func (c *calls) endedAt(id string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.ended[id]
	return at, ok
}

// process is one process of the example: its own pool and app.
func process(t *testing.T, dbURL string, call func(context.Context, *payments.Event) error) *app {
	t.Helper()
	return processOn(t, dbURL, call, false)
}

// processOn is process, on a River client of its own when ownRiver.
func processOn(t *testing.T, dbURL string, call func(context.Context, *payments.Event) error, ownRiver bool) *app {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if call == nil {
		call = pause(0)
	}
	a, err := newApp(ctx, pool, call, slog.New(slog.NewTextHandler(io.Discard, nil)), ownRiver)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// startWorker runs a.work until the test ends, and fails the test when it
// does not stop cleanly.
func startWorker(t *testing.T, a *app, client *payments.Client, every time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.work(ctx, client, every) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("work: %v", err)
		}
	})
}

// pay confirms a payment of amount with reference on the fake.
func pay(t *testing.T, client *payments.Client, reference, amount string) *payments.Payment {
	t.Helper()
	ctx := context.Background()
	r, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{AccountNumber: "0123456789",
		AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: decimal.RequireFromString(amount)},
		Currency: "NGN", RecipientID: r.ID, Reference: reference})
	if err != nil {
		t.Fatal(err)
	}
	if p, err = client.Payments.Confirm(ctx, p.ConfirmParams()); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitBooked waits until every id has a row in order_events, and returns
// how many rows each has.
func waitBooked(t *testing.T, a *app, ids []string) map[string]int {
	t.Helper()
	return waitBookedBy(t, a, ids, time.Now().Add(90*time.Second))
}

// bookedCounts returns how many rows of order_events each event has.
func bookedCounts(t *testing.T, a *app) map[string]int {
	t.Helper()
	counts := map[string]int{}
	rows, err := a.pool.Query(context.Background(), `SELECT event_id, count(*) FROM order_events GROUP BY event_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		counts[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return counts
}

// waitBookedBy is waitBooked until deadline.
func waitBookedBy(t *testing.T, a *app, ids []string, deadline time.Time) map[string]int {
	t.Helper()
	for {
		counts := bookedCounts(t, a)
		missing := 0
		for _, id := range ids {
			if counts[id] == 0 {
				missing++
			}
		}
		if missing == 0 {
			return counts
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events never booked: %v", missing, len(ids), counts)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkOnce fails unless every id was booked exactly once, no other event
// was, and every event's River job completed.
func checkOnce(t *testing.T, a *app, ids []string, counts map[string]int) {
	t.Helper()
	for _, id := range ids {
		if counts[id] != 1 {
			t.Errorf("event %s booked %d times, want once", id, counts[id])
		}
	}
	if len(counts) != len(ids) {
		t.Errorf("%d events booked, the service sent %d", len(counts), len(ids))
	}
	var open int
	for _, j := range eventJobs(t, a) {
		if j.State != rivertype.JobStateCompleted {
			open++
		}
	}
	if open != 0 {
		t.Errorf("%d event jobs not completed", open)
	}
}

// eventJobs lists the events' River jobs through River's API (an
// insert-only client on the app's pool), without the purge's.
func eventJobs(t *testing.T, a *app) []*rivertype.JobRow {
	t.Helper()
	client, err := river.NewClient(riverpgxv5.New(a.pool), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []*rivertype.JobRow
	params := river.NewJobListParams().Kinds(pgstore.EventArgs{}.Kind()).First(10000)
	for {
		res, err := client.JobList(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range res.Jobs {
			if !strings.Contains(string(j.EncodedArgs), `"purge"`) {
				jobs = append(jobs, j)
			}
		}
		if len(res.Jobs) < 10000 {
			return jobs
		}
		params = params.After(res.LastCursor)
	}
}
