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
	"net/http/httptest"
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
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// The store tests share one throwaway PostgreSQL and one Redis (or
// PAYMENTS_TEST_POSTGRES_URL and PAYMENTS_TEST_REDIS_URL), started on first
// use and stopped here.
func TestMain(m *testing.M) { os.Exit(testservers.Main(m)) }

// instance is the receiver's run function running in the test.
type instance struct {
	url  string      // http://host:port
	logs *syncBuffer // its JSON log
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
	logs := new(syncBuffer)
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
	n := map[string]int{}
	for _, line := range strings.Split(in.logs.String(), "\n") {
		var rec struct {
			Msg     string `json:"msg"`
			EventID string `json:"event_id"`
		}
		if line != "" && json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "event processed" {
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

// loseFirstAnswer sits between the fake and two replicas: it sends each
// event's first attempt to a and answers 503 whatever a did (the answer is
// lost), and every later attempt to b, answering what b answers. It
// records the webhook-id header of each attempt, by the event id of the
// body.
type loseFirstAnswer struct {
	*httptest.Server
	mu         sync.Mutex
	webhookIDs map[string][]string
}

func newLoseFirstAnswer(t *testing.T, a, b string) *loseFirstAnswer {
	t.Helper()
	p := &loseFirstAnswer{webhookIDs: map[string][]string{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var ev struct{ ID string }
		_ = json.Unmarshal(body, &ev)
		p.mu.Lock()
		p.webhookIDs[ev.ID] = append(p.webhookIDs[ev.ID], r.Header.Get(payments.StandardIDHeader))
		first := len(p.webhookIDs[ev.ID]) == 1
		p.mu.Unlock()
		target := b
		if first {
			target = a
		}
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, target+"/webhooks", bytes.NewReader(body))
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(resp.StatusCode)
	}))
	t.Cleanup(p.Close)
	return p
}

// TestReplicasShareTheStore runs the receiver as two replicas, wired by
// PAYMENTS_WEBHOOK_STORE to each store, under each signing scheme, behind
// the fake of paymentstest signing as the scheme says. Replica A processes
// each event but its answer is lost; the fake's retry, with the same
// webhook-id, reaches replica B. With a shared store B answers 200 without
// processing the event again; with the in-memory store it processes it a
// second time, which is why several replicas need a shared store.
func TestReplicasShareTheStore(t *testing.T) {
	for _, kind := range []string{"memory", "postgres", "redis"} {
		for _, scheme := range []paymentstest.WebhookScheme{paymentstest.SchemePayments, paymentstest.SchemeStandard} {
			t.Run(kind+"/"+string(scheme), func(t *testing.T) {
				opts := []paymentstest.Option{paymentstest.WithWebhookScheme(scheme), paymentstest.WithWebhookRetryWait(time.Millisecond)}
				if scheme == paymentstest.SchemePayments {
					opts = append(opts, paymentstest.WithWebhook("", randomName("secret-")))
				} // the standard scheme makes its own whsec_ secret
				srv := paymentstest.NewServer(opts...)
				t.Cleanup(srv.Close)
				env := map[string]string{
					envSecret: srv.WebhookSecrets()[0],
					envScheme: string(scheme),
					envStore:  storeURL(t, kind, randomName("recv_"), func() []string { return eventIDs(srv) }),
				}
				a := startReceiver(t, env)
				b := startReceiver(t, env)
				proxy := newLoseFirstAnswer(t, a.url, b.url)
				if err := srv.SetWebhookURL(proxy.URL); err != nil {
					t.Fatal(err)
				}

				makeEvents(t, srv)
				log := srv.Deliveries()
				if len(log) != 3 {
					t.Fatalf("%d deliveries, want 3", len(log))
				}
				byA, byB := a.processed(t), b.processed(t)
				for _, dl := range log {
					if dl.Status != paymentstest.DeliveryDelivered || len(dl.Attempts) != 2 ||
						dl.Attempts[0].StatusCode != http.StatusServiceUnavailable || dl.Attempts[1].StatusCode != http.StatusOK {
						t.Errorf("%s: status %s, attempts %+v; want the lost answer, then 200", dl.Event, dl.Status, dl.Attempts)
					}
					if byA[dl.EventID] != 1 {
						t.Errorf("%s: replica A processed it %d times, want 1", dl.Event, byA[dl.EventID])
					}
					want := 0 // a shared store: B knows A processed it
					if kind == "memory" {
						want = 1 // B's own memory has never seen it
					}
					if byB[dl.EventID] != want {
						t.Errorf("%s: replica B processed it %d times, want %d", dl.Event, byB[dl.EventID], want)
					}
					proxy.mu.Lock()
					ids := proxy.webhookIDs[dl.EventID]
					proxy.mu.Unlock()
					if scheme == paymentstest.SchemeStandard && (len(ids) != 2 || ids[0] != dl.EventID || ids[1] != dl.EventID) {
						t.Errorf("%s: webhook-id of the attempts %q, want the event id %s twice", dl.Event, ids, dl.EventID)
					}
				}
				for _, in := range []*instance{a, b} {
					for _, level := range []string{`"level":"WARN"`, `"level":"ERROR"`} {
						if strings.Contains(in.logs.String(), level) {
							t.Errorf("a replica refused or failed something:\n%s", in.logs)
						}
					}
				}
			})
		}
	}
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
