// Command handoffpath serves deliveries through a webhook.NewQueueHandler
// handler in a binary built with coverage, and writes the coverage
// counters of one delivery alone: TestHandOffPathFiles reads from them
// which of the project's files a delivery handed off crosses.
//
// Usage: handoffpath DIR [observed]. With "observed", the handler has a
// logger and a DeliveryObserver, so that the surprise scan runs too.
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/coverage"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

func main() {
	if err := run(os.Args[1], len(os.Args) > 2 && os.Args[2] == "observed"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir string, observed bool) error {
	const secret = "whsec_handoff_path"
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		return err
	}
	var enqueued []string
	enqueue := func(_ context.Context, ev *payments.Event) error {
		enqueued = append(enqueued, ev.ID)
		return nil
	}
	var opts []webhook.HandlerOption
	if observed {
		opts = append(opts, webhook.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))),
			webhook.WithDeliveryObserver(func(ctx context.Context, _ *http.Request) (context.Context, func(webhook.DeliveryResult)) {
				return ctx, func(webhook.DeliveryResult) {}
			}))
	}
	h := webhook.NewQueueHandler(verifier, enqueue, opts...)
	deliver := func(id string) int {
		body := []byte(`{"id":"` + id + `","event":"payment.completed","created_at":"2024-05-01T10:00:00Z",` +
			`"data":{"id":"p1","reference":"r1","status":"completed","amount":"10.00","currency":"NGN"}}`)
		req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
		req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(body, time.Now(), secret))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	// A first delivery, so that what runs once per process is not counted.
	if code := deliver("00000000-0000-4000-8000-000000000001"); code != http.StatusOK {
		return fmt.Errorf("the first delivery was answered %d", code)
	}
	if err := coverage.WriteMetaDir(dir); err != nil {
		return err
	}
	if err := coverage.ClearCounters(); err != nil {
		return err
	}
	code := deliver("00000000-0000-4000-8000-000000000002")
	if err := coverage.WriteCountersDir(dir); err != nil {
		return err
	}
	if code != http.StatusOK || len(enqueued) != 2 {
		return fmt.Errorf("the delivery was answered %d, and %d events enqueued", code, len(enqueued))
	}
	return nil
}
