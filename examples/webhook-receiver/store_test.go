package main

import (
	"context"
	"log/slog"
	"net"
	"net/url"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// connections counts the store's connections named name, as the server
// sees them.
func connections(t *testing.T, kind, name string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if kind == "postgres" {
		pool, err := pgxpool.New(ctx, testservers.SharedPostgres(t).URL())
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	opts, err := redis.ParseURL(testservers.SharedRedis(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	list, err := c.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(list, " name="+name+" ")
}

// TestShutdownClosesTheStore: the store's connections are open while the
// receiver serves, and closed once it has stopped.
func TestShutdownClosesTheStore(t *testing.T) {
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: "", Secrets: []string{"s"}}), paymentstest.WithSandbox(paymentstest.Sandbox{}),
				paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond}}))
			t.Cleanup(srv.Close)
			name := randomName("recv_")
			in := startReceiver(t, map[string]string{
				envSecret: "s",
				envStore:  storeURL(t, kind, name, func() []string { return eventIDs(srv) }),
			})
			setWebhookURL(t, srv, in.url+"/webhooks")
			makeEvents(t, srv)
			if n := len(in.processed(t)); n != 3 {
				t.Fatalf("%d events processed, want 3:\n%s", n, in.logs)
			}
			if n := connections(t, kind, name); n == 0 {
				t.Fatalf("no connection named %s while serving", name)
			}
			// With the garbage collector off, a connection the receiver
			// forgot to close stays open: its finalizer cannot close it.
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			if err := in.stop(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for connections(t, kind, name) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%d connections named %s after the receiver stopped", connections(t, kind, name), name)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(in.logs.String(), `"msg":"claim store closed"`) {
				t.Errorf("no closing line:\n%s", in.logs)
			}
		})
	}
}

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// withPassword returns rawURL with its password replaced.
func withPassword(t *testing.T, rawURL, password string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

// TestStoreOutOfReach: a store that cannot be reached, or refuses the
// password, stops the receiver before it listens, with an error that names
// the store by its redacted URL and never shows the password, in any form.
func TestStoreOutOfReach(t *testing.T) {
	const pw = "hunter2-p@ss/word"
	escaped := url.UserPassword("u", pw).String()[2:]
	closed := closedPort(t)
	type storeCase struct {
		name, store string
		want        []string // in the error
	}
	cases := []storeCase{
		{"postgres, nothing listens", "postgres://postgres:" + escaped + "@" + closed + "/db?sslmode=disable",
			[]string{"PAYMENTS_WEBHOOK_STORE=postgres://postgres:xxxxx@" + closed + "/db (PostgreSQL): "}},
		{"postgres, password in the query", "postgresql://postgres@" + closed + "/db?sslmode=disable&password=" + url.QueryEscape(pw),
			[]string{"PAYMENTS_WEBHOOK_STORE=postgresql://postgres@" + closed + "/db (PostgreSQL): "}},
		{"redis, nothing listens", "redis://:" + escaped + "@" + closed + "/0",
			[]string{"PAYMENTS_WEBHOOK_STORE=redis://:xxxxx@" + closed + "/0 (Redis): ", "connection refused"}},
		{"redis, bad option", "redis://:" + escaped + "@" + closed + "/0?no_such_option=1",
			[]string{"(Redis): ", "no_such_option"}},
	}
	if testing.Short() {
		t.Log("-short: not against the real servers")
	} else {
		pg := testservers.SharedPostgres(t)
		rd := testservers.SharedRedis(t)
		cases = append(cases,
			storeCase{"postgres, wrong password", withPassword(t, pg.URL(), pw),
				[]string{"(PostgreSQL): ", "password authentication failed"}},
			storeCase{"redis, wrong password", withPassword(t, rd.URL(), pw),
				[]string{"(Redis): ", "WRONGPASS"}},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := loadConfig(environment{Secret: "s", Store: c.store, Addr: "127.0.0.1:0"})
			if err != nil {
				t.Fatal(err)
			}
			var logs testlog.Buffer
			start := time.Now()
			err = run(context.Background(), cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
			if err == nil {
				t.Fatal("the receiver ran")
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s to give up", d)
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			for _, secret := range []string{pw, escaped, url.QueryEscape(pw), "hunter2"} {
				if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
					t.Errorf("the password shows (%q):\n%v\n%s", secret, err, logs.String())
				}
			}
			if strings.Contains(logs.String(), "listening") {
				t.Errorf("listened without a store:\n%s", logs.String())
			}
		})
	}
}

// TestStoreURLForms: postgresql://, an upper-case scheme and rediss:// are
// accepted; the redacted form drops the password and the query.
func TestStoreURLForms(t *testing.T) {
	for raw, want := range map[string]storeConfig{
		"":   {kind: "memory"},
		"  ": {kind: "memory"},
		"postgres://u:pw@db:5432/app?sslmode=require": {kind: "postgres", url: "postgres://u:pw@db:5432/app?sslmode=require",
			redacted: "postgres://u:xxxxx@db:5432/app", secrets: []string{"pw"}},
		"POSTGRESQL://u@db/app?password=pw": {kind: "postgres", url: "postgresql://u@db/app?password=pw",
			redacted: "postgresql://u@db/app", secrets: []string{"pw"}},
		"redis://:p%40ss@cache:6379/2": {kind: "redis", url: "redis://:p%40ss@cache:6379/2",
			redacted: "redis://:xxxxx@cache:6379/2", secrets: []string{"p@ss", "p%40ss"}},
		"rediss://default:pw@cache:6380": {kind: "redis", url: "rediss://default:pw@cache:6380",
			redacted: "rediss://default:xxxxx@cache:6380", secrets: []string{"pw"}},
	} {
		got, err := parseStore(raw)
		if err != nil {
			t.Errorf("%q: %v", raw, err)
			continue
		}
		if got.kind != want.kind || got.url != want.url || got.redacted != want.redacted ||
			strings.Join(got.secrets, " ") != strings.Join(want.secrets, " ") {
			t.Errorf("%q: got %+v, want %+v", raw, got, want)
		}
	}
}
