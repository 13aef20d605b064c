package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/webhook"
)

// freezeOn is a slog.Handler that freezes a proxy when the event processing
// logs msg: the store's network goes away just as the event is processed,
// before the handler records it as done.
type freezeOn struct {
	slog.Handler
	msg   string
	proxy *testservers.Proxy
	once  *sync.Once
}

func (h freezeOn) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(h.proxy.Freeze)
	}
	return h.Handler.Handle(ctx, r)
}

func (h freezeOn) WithAttrs(as []slog.Attr) slog.Handler {
	h.Handler = h.Handler.WithAttrs(as)
	return h
}

func (h freezeOn) WithGroup(name string) slog.Handler {
	h.Handler = h.Handler.WithGroup(name)
	return h
}

// TestShutdownWaitsForPendingCompletions: on SIGTERM, an event that was
// processed while the store hung, and so answered 200 but not yet recorded
// as done, holds the receiver until the store comes back and the record
// lands (within the shutdown's 20 seconds); only then does it stop.
func TestShutdownWaitsForPendingCompletions(t *testing.T) {
	rd := testservers.SharedRedis(t)
	u, err := url.Parse(rd.URL())
	if err != nil {
		t.Fatal("the server's URL does not parse")
	}
	proxy := testservers.StartProxy(t, u.Host)
	cfg, err := loadConfig(envOf(map[string]string{envSecret: testSecret, envStore: proxy.URL(t, rd.URL()), envAddr: "127.0.0.1:0"}))
	if err != nil {
		t.Fatal(err)
	}
	logs := new(testlog.Buffer)
	logger := slog.New(freezeOn{Handler: slog.NewJSONHandler(logs, nil), msg: "payment event", proxy: proxy, once: new(sync.Once)})
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, logger) }()
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		addr = listeningAddr(t, logs.String())
	}
	if addr == "" {
		t.Fatalf("the receiver did not listen:\n%s", logs)
	}

	const id = "3d6f1b2a-8c4e-4f5a-9b7d-2e1c0a9f8b7e"
	t.Cleanup(func() {
		opts, _ := redis.ParseURL(rd.URL())
		c := redis.NewClient(opts)
		defer c.Close()
		c.Del(context.Background(), redisstore.DefaultPrefix+id)
	})
	body := []byte(`{"id":"` + id + `","event":"payment.completed","created_at":"2024-05-01T10:00:00Z",` +
		`"data":{"id":"pay-1","reference":"order-7","status":"completed","amount":"1500.00","currency":"NGN"}}`)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/webhooks", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(body, time.Now(), testSecret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the processed event was answered %d, want 200:\n%s", resp.StatusCode, logs)
	}

	sigterm()
	select {
	case err := <-done:
		t.Fatalf("the receiver stopped (%v) with an event not recorded as done", err)
	case <-time.After(time.Second):
	}
	proxy.Thaw()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the receiver stopped with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the receiver did not stop after its store came back")
	}
	if !strings.Contains(logs.String(), "processed event recorded as done after a retry") {
		t.Errorf("no log of the late completion:\n%s", logs)
	}
	opts, err := redis.ParseURL(rd.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	if v, err := c.Get(context.Background(), redisstore.DefaultPrefix+id).Result(); err != nil || !strings.HasPrefix(v, "done:") {
		t.Errorf("the event's key holds %q, %v; want a completion", v, err)
	}
}
