package main

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/internal/testservers"
	outcomes "github.com/paymentsapi/payments-go/outcome"
)

// pgOutcomeStore returns a migrated pgstore.OutcomeStore on a table of its
// own on the server at url (dropped when the test ends), and the table.
func pgOutcomeStore(t *testing.T, url string) (*pgstore.OutcomeStore, string) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	table := strings.ReplaceAll(outcometest.NewID("stuck_"), "-", "_")
	s, err := pgstore.NewOutcomeStore(pool, pgstore.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = pool.Exec(ctx, "DROP TABLE IF EXISTS "+table)
	})
	if err := s.Migrate(outcometest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	return s, table
}

// The command reads what pgstore.OutcomeStore wrote: the payment confirmed
// two hours ago without an outcome and the unverified recipient, not the
// finished ones; a wrong password or a TLS the server does not offer is an
// error (exit 1) that never prints the URL's password.
func TestStuckPostgres(t *testing.T) {
	t.Parallel()
	srv := testservers.SharedPostgres(t)
	s, table := pgOutcomeStore(t, srv.URL())
	payment, recipient := outcometest.StuckFixture(t, s)

	code, stdout, stderr := runCLI(t, map[string]string{envOutcomeStore: srv.URL()},
		"payments", "stuck", "--older-than", "1h", "--table", table)
	if code != exitOK || !strings.Contains(stdout, payment) || !strings.Contains(stdout, recipient) ||
		!strings.Contains(stdout, "2 stuck for more than 1h0m0s: 1 payments without a final outcome, 1 recipients unverified") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout, "\n"); n != 4 {
		t.Fatalf("%d lines, want a header, 2 outcomes and the summary:\n%s", n, stdout)
	}
	code, stdout, _ = runCLI(t, nil, "payments", "stuck", "--older-than", "3h", "--table", table, "--store", srv.URL())
	if code != exitOK || stdout != "nothing stuck for more than 3h0m0s\n" {
		t.Fatalf("--older-than 3h: exit %d, %q", code, stdout)
	}

	bad := strings.Replace(srv.URL(), srv.Password(), "wrong-"+srv.Password(), 1)
	code, _, stderr = runCLI(t, map[string]string{envOutcomeStore: bad}, "payments", "stuck", "--table", table)
	if code != exitFailure || !strings.Contains(stderr, "password authentication failed") || strings.Contains(stderr, srv.Password()) {
		t.Fatalf("a wrong password: exit %d, %q", code, stderr)
	}
	// The throwaway server has no TLS: sslmode=require must not fall back
	// to a plain connection.
	code, stdout, stderr = runCLI(t, nil, "payments", "stuck", "--table", table, "--store", withSSLMode(t, srv.URL(), "require"))
	if code != exitFailure || stdout != "" || !strings.Contains(stderr, "server refused TLS connection") || strings.Contains(stderr, srv.Password()) {
		t.Fatalf("sslmode=require without TLS: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, nil, "payments", "stuck", "--table", "no_such_table", "--store", srv.URL())
	if code != exitFailure || !strings.Contains(stderr, `relation "no_such_table" does not exist`) {
		t.Fatalf("a table that does not exist: exit %d, %q", code, stderr)
	}
}

// withSSLMode returns the URL raw with its sslmode set to mode.
func withSSLMode(t *testing.T, raw, mode string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("sslmode", mode)
	u.RawQuery = q.Encode()
	return u.String()
}

// redisOutcomeStore returns a redisstore.OutcomeStore on the server at url,
// under a prefix of its own, and the prefix.
func redisOutcomeStore(t *testing.T, url string) (*redisstore.OutcomeStore, string) {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	prefix := outcometest.NewID("stuck:") + ":"
	s, err := redisstore.NewOutcomeStore(client, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	return s, prefix
}

// The command reads what redisstore.OutcomeStore wrote under the prefix,
// as JSON and as text; a wrong password is an error (exit 1) that never
// prints it.
func TestStuckRedis(t *testing.T) {
	t.Parallel()
	srv := testservers.SharedRedis(t)
	s, prefix := redisOutcomeStore(t, srv.URL())
	payment, recipient := outcometest.StuckFixture(t, s)

	code, stdout, stderr := runCLI(t, map[string]string{envOutcomeStore: srv.URL()},
		"payments", "stuck", "--older-than", "1h", "--prefix", prefix, "--json")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != exitOK || len(lines) != 2 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got := map[string]outcomes.State{}
	for _, l := range lines {
		var o outcomes.Outcome
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatal(err)
		}
		got[o.ID] = o.State
	}
	if len(got) != 2 || got[payment] != outcomes.StatePending || got[recipient] != outcomes.StateUnverified {
		t.Fatalf("stuck: %v, want %s pending and %s unverified", got, payment, recipient)
	}
	code, stdout, _ = runCLI(t, nil, "payments", "stuck", "--older-than", "1h", "--prefix", prefix, "--store", srv.URL())
	if code != exitOK || !strings.Contains(stdout, "2 stuck for more than 1h0m0s: 1 payments without a final outcome, 1 recipients unverified") {
		t.Fatalf("text: exit %d, %q", code, stdout)
	}
	code, stdout, _ = runCLI(t, nil, "payments", "stuck", "--older-than", "3h", "--prefix", prefix, "--store", srv.URL())
	if code != exitOK || stdout != "nothing stuck for more than 3h0m0s\n" {
		t.Fatalf("--older-than 3h: exit %d, %q", code, stdout)
	}

	bad := strings.Replace(srv.URL(), srv.Password(), "wrong-"+srv.Password(), 1)
	code, _, stderr = runCLI(t, map[string]string{envOutcomeStore: bad}, "payments", "stuck", "--prefix", prefix)
	if code != exitFailure || !strings.Contains(stderr, "WRONGPASS") || strings.Contains(stderr, srv.Password()) {
		t.Fatalf("a wrong password: exit %d, %q", code, stderr)
	}
}

// A driver's error that quotes the URL is printed without its password,
// plain or escaped; a URL that does not parse is never quoted.
func TestRedactPassword(t *testing.T) {
	for _, c := range []struct{ msg, raw, want string }{
		{"cannot parse postgres://u:s3cret@h/db", "postgres://u:s3cret@h/db", "cannot parse postgres://u:xxxxx@h/db"},
		{"bad redis://:p%40ss@h:6379 and p@ss", "redis://:p%40ss@h:6379", "bad redis://:xxxxx@h:6379 and xxxxx"},
		{"no password here", "redis://h:6379", "no password here"},
		{"parse \"postgres://u:pw@h:bad\"", "postgres://u:pw@h:bad", `invalid port ":bad" after host`},
	} {
		if got := redactPassword(c.msg, c.raw); got != c.want {
			t.Errorf("redactPassword(%q, %q) = %q, want %q", c.msg, c.raw, got, c.want)
		}
	}
}
