package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

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
		p.webhookIDs[ev.ID] = append(p.webhookIDs[ev.ID], r.Header.Get(webhook.StandardIDHeader))
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
				secret := randomName("secret-")
				if scheme == paymentstest.SchemeStandard {
					var err error
					if secret, err = webhook.NewStandardSecret(); err != nil {
						t.Fatal(err)
					}
				}
				srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{Scheme: scheme}), paymentstest.WithWebhook(paymentstest.Webhook{URL: "", Secrets: []string{secret}}),
					paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond}}),
					paymentstest.WithSandbox(paymentstest.Sandbox{}))
				t.Cleanup(srv.Close)
				env := map[string]string{
					envSecret: secret,
					envScheme: string(scheme),
					envStore:  storeURL(t, kind, randomName("recv_"), func() []string { return eventIDs(srv) }),
				}
				a := startReceiver(t, env)
				b := startReceiver(t, env)
				proxy := newLoseFirstAnswer(t, a.url, b.url)
				setWebhookURL(t, srv, proxy.URL)

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
