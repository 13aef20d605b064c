package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// The store tests share one throwaway PostgreSQL and one Redis (or
// PAYMENTS_TEST_POSTGRES_URL and PAYMENTS_TEST_REDIS_URL), started on first
// use and stopped here.
func TestMain(m *testing.M) { os.Exit(testservers.Main(m)) }

// instance is the receiver's run function running in the test.
type instance struct {
	url  string          // http://host:port
	logs *testlog.Buffer // its JSON log
	stop func() error
}

// startReceiver runs the program as main does, with the environment env
// (PAYMENTS_WEBHOOK_ADDR defaults to a free port), until the test ends or
// stop is called, and returns once it listens.
func startReceiver(t *testing.T, env map[string]string) *instance {
	t.Helper()
	if env[envAddr] == "" {
		env[envAddr] = "127.0.0.1:0"
	}
	cfg, err := loadConfig(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs := new(testlog.Buffer)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, slog.New(slog.NewJSONHandler(logs, nil))) }()
	var once sync.Once
	var runErr error
	in := &instance{logs: logs, stop: func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}}
	t.Cleanup(func() {
		if err := in.stop(); err != nil {
			t.Errorf("the receiver stopped with %v", err)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if addr := listeningAddr(t, logs.String()); addr != "" {
			in.url = "http://" + addr
			return in
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the receiver stopped before listening: %v\n%s", err, logs)
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatalf("the receiver did not listen:\n%s", logs)
	return nil
}

// processed counts the events the receiver processed (the SDK's handler
// logs "event processed" once the function returned nil), by event id.
func (in *instance) processed(t *testing.T) map[string]int {
	t.Helper()
	return in.logged(t, "event processed")
}

// logged counts the log lines with message msg, by event id.
func (in *instance) logged(t *testing.T, msg string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, line := range strings.Split(in.logs.String(), "\n") {
		var rec struct {
			Msg     string `json:"msg"`
			EventID string `json:"event_id"`
		}
		if line != "" && json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == msg {
			n[rec.EventID]++
		}
	}
	return n
}

// randomName returns prefix and 12 random hex digits.
func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// withQuery returns rawURL with the query parameter name=value added.
func withQuery(t *testing.T, rawURL, name, value string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// storeURL returns the PAYMENTS_WEBHOOK_STORE of kind on the shared test
// servers ("" for memory), its connections named name, and forgets the
// given event ids when the test ends, for servers that outlive it.
func storeURL(t *testing.T, kind, name string, ids func() []string) string {
	t.Helper()
	ctx := context.Background()
	switch kind {
	case "postgres":
		pg := testservers.SharedPostgres(t)
		t.Cleanup(func() {
			pool, err := pgxpool.New(ctx, pg.URL())
			if err != nil {
				return
			}
			defer pool.Close()
			_, _ = pool.Exec(ctx, "DELETE FROM "+pgstore.DefaultTable+" WHERE event_id = ANY($1)", ids())
		})
		return withQuery(t, pg.URL(), "application_name", name)
	case "redis":
		rd := testservers.SharedRedis(t)
		t.Cleanup(func() {
			opts, err := redis.ParseURL(rd.URL())
			if err != nil {
				return
			}
			c := redis.NewClient(opts)
			defer c.Close()
			for _, id := range ids() {
				c.Del(ctx, redisstore.DefaultPrefix+id)
			}
		})
		return withQuery(t, rd.URL(), "client_name", name)
	}
	return ""
}

// makeEvents makes three events on srv (recipient.created,
// recipient.verified, a triggered payment.completed) and waits for their
// deliveries.
func makeEvents(t *testing.T, srv *paymentstest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := srv.Client()
	if _, err := c.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Lovelace",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Webhooks.Trigger(ctx, payments.EventPaymentCompleted); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitForDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
}

// eventIDs returns the ids of the events srv made.
func eventIDs(srv *paymentstest.Server) []string {
	var ids []string
	for _, ev := range srv.Events() {
		ids = append(ids, ev.ID)
	}
	return ids
}

// admin calls the fake's admin API (the server must be started
// WithSandbox): method path under /_sandbox/ with body as JSON (nil: none),
// the answer's data decoded into out (nil: ignored). The fake keeps these
// settings off its Go API.
func admin(t *testing.T, srv *paymentstest.Server, method, path string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, srv.URL()+"/_sandbox/"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.APIKey())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &env) != nil {
		t.Fatalf("%s /_sandbox/%s: %d %s %v", method, path, resp.StatusCode, raw, err)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			t.Fatal(err)
		}
	}
}

// setWebhookURL sends srv's deliveries to url from now on.
func setWebhookURL(t *testing.T, srv *paymentstest.Server, url string) {
	t.Helper()
	admin(t, srv, http.MethodPut, "webhook-url", map[string]string{"url": url}, nil)
}

// faultsInjected counts the requests an injected fault broke.
func faultsInjected(srv *paymentstest.Server) int {
	n := 0
	for _, rec := range srv.Requests() {
		if rec.Fault != "" {
			n++
		}
	}
	return n
}
