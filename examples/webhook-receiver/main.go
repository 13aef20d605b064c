// Command webhook-receiver is a complete webhook endpoint for the Payments
// API, ready to copy into a merchant's service. It verifies each delivery's
// signature, processes each event once, and answers so that the service
// retries what failed.
//
// Configuration comes from the environment:
//
//	PAYMENTS_WEBHOOK_SECRET    the endpoint's signing secret (required); while
//	                           a secret rotates, give both, comma-separated
//	PAYMENTS_WEBHOOK_SCHEME    how deliveries are signed: payments (the
//	                           default: the Payments-Signature header) or
//	                           standard (Standard Webhooks: webhook-id,
//	                           webhook-timestamp, webhook-signature; the
//	                           secrets are then whsec_ secrets, and events
//	                           are deduplicated on webhook-id)
//	PAYMENTS_WEBHOOK_STORE     where processed event ids are kept: unset for
//	                           this process's memory (one replica only);
//	                           postgres://user:password@host:5432/db (or
//	                           postgresql://) for a PostgreSQL table, created
//	                           at start-up if missing (the role needs CREATE
//	                           on the schema for that, the first time; see
//	                           eventstore/pgstore); redis://:password@host:6379/0
//	                           (rediss:// for TLS) for Redis. Replicas that
//	                           share it process each event once between them.
//	PAYMENTS_WEBHOOK_ADDR      the address to listen on (default ":8080")
//	PAYMENTS_RECONCILE_EVERY   how often to recover the events whose
//	                           deliveries never arrived (a Go duration such
//	                           as 10m; unset or 0: never): at start-up, then
//	                           this often, the service's events are listed
//	                           and run through the same function and store as
//	                           deliveries (webhook.Handler.Reconcile), so
//	                           those already processed are skipped. It needs
//	                           PAYMENTS_WEBHOOK_STORE (the in-memory store
//	                           forgets what it processed when the program
//	                           stops), and a client for the list of events:
//	                           PAYMENTS_API_KEY and PAYMENTS_BASE_URL, as
//	                           payments.NewClientFromEnv reads them.
//	PAYMENTS_RECONCILE_WINDOW  how far back reconcile lists events (default
//	                           24h, at most the stores' 7 days)
//
// Every problem in these is reported at once, before anything starts; a
// store out of reach at start-up stops the program. The store's URL is only
// ever printed with its password masked. A service without the list of
// events (404) turns reconcile off with a warning. On SIGINT or SIGTERM the
// program stops reconciling, finishes the deliveries in flight, waits for
// the events it processed but could not yet record as done (the store was
// unreachable; the handler keeps trying), all within 20 seconds, then
// closes the store's connections.
//
// Run it, point the dashboard's webhook URL at https://<your host>/webhooks,
// and send a test event with client.Webhooks.Trigger:
//
//	PAYMENTS_WEBHOOK_SECRET=whsec_... go run ./examples/webhook-receiver
//
// cmd/payments-sandbox delivers to http://localhost:8080/webhooks by
// default, so the two meet as they are: export the lines the sandbox
// prints (PAYMENTS_WEBHOOK_SECRET, and PAYMENTS_WEBHOOK_SCHEME when it runs
// with -webhook-scheme standard), then run this program.
//
// The files: main.go reads the environment, starts and serves; config.go
// checks the environment; store.go opens the claim store; events.go
// processes each event; reconcile.go recovers the events whose deliveries
// never arrived.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/paymentsapi/payments-go/webhook"
)

const defaultAddr = ":8080"

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := loadConfig(environment{
		Secret: os.Getenv("PAYMENTS_WEBHOOK_SECRET"),
		Scheme: os.Getenv("PAYMENTS_WEBHOOK_SCHEME"),
		Store:  os.Getenv("PAYMENTS_WEBHOOK_STORE"),
		Addr:   os.Getenv("PAYMENTS_WEBHOOK_ADDR"),

		ReconcileEvery:  os.Getenv("PAYMENTS_RECONCILE_EVERY"),
		ReconcileWindow: os.Getenv("PAYMENTS_RECONCILE_WINDOW"),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg, logger)
	stop()
	if err != nil {
		logger.Error("webhook-receiver stopped", slog.String("error", err.Error()))
		os.Exit(1)
	}
}

// run opens the claim store, reconciles when asked to and serves until ctx
// ends, then stops reconciling, and closes the store once the deliveries in
// flight are done.
func run(ctx context.Context, cfg config, logger *slog.Logger) error {
	store, closeStore, err := openStore(ctx, cfg.store, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	mux, hooks := newMux(cfg.verifier, store, logger)
	drain := hooks.Shutdown
	if cfg.reconcile.every > 0 {
		defer cfg.reconcile.client.Close()
		stopReconcile := startReconcile(ctx, hooks, cfg.reconcile, logger)
		defer stopReconcile(context.Background()) // when serve fails before ctx ends
		drain = func(ctx context.Context) error {
			stopReconcile(ctx) // before Shutdown, which would refuse its next event
			return hooks.Shutdown(ctx)
		}
	}
	return serve(ctx, cfg.addr, mux, drain, logger)
}

// newMux routes /webhooks to the SDK's receiver and /healthz to a liveness
// probe. It returns the receiver too, whose Shutdown waits for the
// completions it still retries.
func newMux(verifier webhook.Verifier, store webhook.ClaimStore, logger *slog.Logger) (http.Handler, *webhook.Handler) {
	r := &receiver{logger: logger}
	mux := http.NewServeMux()
	// Registered without a method so that the SDK's handler answers other
	// methods itself (405 with Allow: POST).
	hooks := webhook.NewHandler(verifier, r.handle,
		webhook.WithClaimStore(store), // the ids already processed: see PAYMENTS_WEBHOOK_STORE
		webhook.WithLogger(logger),    // refusals and failures, never secrets or bodies
	)
	mux.Handle("/webhooks", hooks)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	return mux, hooks
}

// shutdownTimeout is what a graceful stop may take: less than the 30
// seconds most platforms leave between SIGTERM and SIGKILL.
const shutdownTimeout = 20 * time.Second

// serve listens on addr, logs "listening" once the port is bound (so the
// log never announces a port that another program holds), and serves until
// ctx ends; then it lets the deliveries in flight finish, and drain (the
// webhook handler's Shutdown, when not nil) wait for what they left
// pending, within shutdownTimeout in all, before returning.
func serve(ctx context.Context, addr string, handler http.Handler, drain func(context.Context) error, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (set PAYMENTS_WEBHOOK_ADDR to another address): %w", addr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second, // longer than the slowest event processing
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("listening", slog.String("addr", ln.Addr().String()), slog.String("path", "/webhooks"))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	shutdownErr := srv.Shutdown(shutdownCtx)
	if drain != nil {
		// Events processed whose completion the store has not taken yet:
		// the handler retries it until it lands or this deadline, and
		// logs what it leaves. Run even when the server did not close in
		// time, so that nothing is abandoned silently.
		shutdownErr = errors.Join(shutdownErr, drain(shutdownCtx))
	}
	if shutdownErr != nil {
		return fmt.Errorf("graceful shutdown: %w", shutdownErr)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
