package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// TestMain runs the tests with PostgreSQL (PAYMENTS_TEST_POSTGRES_URL, else
// a throwaway server of the Debian binaries), and lets the test binary be
// the program itself, as a child process a test can kill: with
// PAYOUTS_RIVER_CHILD=1 it is the program.
func TestMain(m *testing.M) {
	if os.Getenv("PAYOUTS_RIVER_CHILD") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(testservers.Main(m))
}

// newDB creates a database of its own on the server at base (River's
// tables are per database) and returns its URL.
func newDB(t *testing.T, base string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "payouts_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a, err := pgxpool.New(context.Background(), base)
		if err == nil {
			_, _ = a.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
			a.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// testDB is a database of the test's own on the shared server.
func testDB(t *testing.T) string {
	t.Helper()
	return newDB(t, testservers.SharedPostgres(t).URL())
}

// env is the environment of the program in a test.
func env(dbURL string, srv *paymentstest.Server) func(string) string {
	return func(k string) string {
		switch k {
		case "DATABASE_URL":
			return dbURL
		case "PAYMENTS_API_KEY":
			if srv != nil {
				return srv.APIKey()
			}
		case "PAYMENTS_BASE_URL":
			if srv != nil {
				return srv.URL()
			}
		}
		return ""
	}
}

// runIn runs the program in this process and returns its exit status and
// what it printed (stdout, then stderr).
func runIn(t *testing.T, ctx context.Context, getenv func(string) string, tty bool, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status := run(ctx, args, getenv, &out, &errOut, func(io.Writer) bool { return tty })
	return status, out.String() + errOut.String()
}

// fastWork are work's flags for tests: short waits everywhere.
var fastWork = []string{"-job-timeout", "5s", "-rescue-after", "8s", "-retry-min", "100ms", "-retry-max", "1s",
	"-refused-wait", "200ms", "-refused-wait-max", "1s", "-recheck", "300ms", "-list-every", "1s"}

// startWorkers runs work in this process until the test ends (or stop is
// called) and returns stop, which waits for it.
func startWorkers(t *testing.T, getenv func(string) string, args ...string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var out string
	go func() {
		defer wg.Done()
		var status int
		status, out = runIn(t, ctx, getenv, false, append(append([]string{"work"}, fastWork...), args...)...)
		if status != 0 {
			t.Errorf("work ended with %d: %s", status, out)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// makeRows saves recipients on srv and writes a payouts file of n rows to
// them at path, named prefix-0000...; amount(i), when not "", is row i's.
func makeRows(t *testing.T, srv *paymentstest.Server, n int, path, prefix string, amount func(i int) string) []row {
	t.Helper()
	c := srv.Client()
	var ids []string
	for i := range min(n, 20) {
		r, err := c.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
			AccountNumber: payments.AccountNumber(fmt.Sprintf("00000000%02d", i)), AccountName: "Payee",
			AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{RecipientID: ids[i%len(ids)], Amount: decimal.New(int64(1000+i), -2), Currency: "NGN", PayoutID: fmt.Sprintf("%s-%04d", prefix, i)}
		if amount != nil && amount(i) != "" {
			rows[i].Amount = decimal.RequireFromString(amount(i))
		}
	}
	if err := writeRows(path, rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// loadFile loads path as run name and fails the test unless it worked.
func loadFile(t *testing.T, getenv func(string) string, path, name string) string {
	t.Helper()
	status, out := runIn(t, context.Background(), getenv, false, "load", "-csv", path, "-run", name)
	if status != 0 {
		t.Fatalf("load: %d: %s", status, out)
	}
	return out
}

// waitFor polls cond until it holds or limit passes.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dbCount runs a count query on dbURL; -1 when the database cannot answer.
func dbCount(dbURL, query string, args ...any) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return -1
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(ctx, query, args...).Scan(&n); err != nil {
		return -1
	}
	return n
}

// paidOnce checks against the fake's ledger that each row's payout id
// names exactly one payment that was paid out (completed), and returns the
// sum of their totals.
func paidOnce(t *testing.T, srv *paymentstest.Server, rows []row) decimal.Decimal {
	t.Helper()
	var sum decimal.Decimal
	for _, r := range rows {
		var paid int
		for _, p := range srv.PaymentsByReference(r.PayoutID) {
			if p.Status == payments.PaymentStatusCompleted {
				paid++
				sum = sum.Add(p.Quote.TotalAmount)
				if !p.Amount.Equal(r.Amount) {
					t.Errorf("payout %s paid %s, the file says %s", r.PayoutID, p.Amount, r.Amount)
				}
			}
		}
		if paid != 1 {
			t.Errorf("payout %s: %d payments completed, want exactly 1", r.PayoutID, paid)
		}
	}
	return sum
}

// csvFile is a path in the test's directory.
func csvFile(t *testing.T, name string) string { return filepath.Join(t.TempDir(), name) }

// lines is s split into lines, for messages.
func lines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

// payoutJob is the River job of a payout, read through River's JobList;
// nil when the database cannot answer.
func payoutJob(db, payoutID string) *rivertype.JobRow {
	var job *rivertype.JobRow
	withRiver(db, func(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx]) {
		var id int64
		if err := pool.QueryRow(ctx, `SELECT coalesce(job_id, 0) FROM payouts WHERE payout_id = $1`, payoutID).Scan(&id); err != nil || id == 0 {
			return
		}
		if res, err := rc.JobList(ctx, river.NewJobListParams().IDs(id).First(1)); err == nil && len(res.Jobs) == 1 {
			job = res.Jobs[0]
		}
	})
	return job
}

// jobCount counts the payouts' jobs in one of states (any state when none
// is given), through River's JobList; -1 when the database cannot answer.
func jobCount(db string, states ...rivertype.JobState) int {
	n := -1
	withRiver(db, func(ctx context.Context, _ *pgxpool.Pool, rc *river.Client[pgx.Tx]) {
		params := river.NewJobListParams().Kinds(payoutArgs{}.Kind()).First(10_000)
		if len(states) > 0 {
			params = params.States(states...)
		}
		if res, err := rc.JobList(ctx, params); err == nil {
			n = len(res.Jobs)
		}
	})
	return n
}

// withRiver runs fn with a pool on db and an insert-only River client.
func withRiver(db string, fn func(context.Context, *pgxpool.Pool, *river.Client[pgx.Tx])) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		return
	}
	defer pool.Close()
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return
	}
	fn(ctx, pool, rc)
}
