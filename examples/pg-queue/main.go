// Command pg-queue is the recommended way to receive the Payments API's
// webhooks on PostgreSQL, as one program with a subcommand per process:
//
//	pg-queue migrate             create or upgrade every table, then exit
//	pg-queue receive             POST /webhooks: verify, enqueue once, 200; GET /healthz
//	pg-queue work                River workers run book; reconcile on a schedule
//	pg-queue await REFERENCE     wait for a payment's final outcome and print it
//
// Every process migrates at start (safe from all at once). Run one or more
// receivers behind your load balancer and one or more workers; they share
// the database named by DATABASE_URL. The receiver answers the service as
// soon as the event is enqueued, so the merchant's function (book) may take
// as long as it needs; it runs in a worker, in the transaction that also
// completes the event's River job, so its writes happen exactly once.
//
// Environment:
//
//	DATABASE_URL              postgres://user:password@host:5432/db (every subcommand)
//	PAYMENTS_WEBHOOK_SECRET   the endpoint's signing secret(s), comma-separated (receive)
//	PAYMENTS_WEBHOOK_ADDR     where receive listens (default :8080)
//	PAYMENTS_API_KEY, PAYMENTS_BASE_URL  the service, for reconcile (work) and the event list (await)
//
// pg-queue -h lists the flags too (before or after the command). Ctrl-C
// or SIGTERM stops a process cleanly: a worker lets its running functions
// commit, a minute at most. docs/webhooks.md ("Trying it on your
// machine") walks through one receiver and two workers against the
// sandbox, and what each fault looks like.
//
// River UI (riverqueue.com) is optional: pointed at the same database, it
// shows the queue "payments_webhooks", each job's event id, errors and
// attempts (not the event's body, which stays in the Queue's table), and
// retries a discarded job. This program does not need it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/webhook"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run runs one command until ctx ends and returns the exit code: 0, 1
// when it failed, 2 for a bad command line.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	cl, err := parseCommandLine(args, stderr) // cmdline.go
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	dbURL := getenv("DATABASE_URL")
	if dbURL == "" {
		fmt.Fprintln(stderr, "pg-queue: set DATABASE_URL to postgres://user:password@host:5432/db")
		return 2
	}
	cfg, err := poolConfig(dbURL)
	if err != nil {
		fmt.Fprintf(stderr, "pg-queue: DATABASE_URL: %v\n", err)
		return 2
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "pg-queue: DATABASE_URL: %v\n", err)
		return 2
	}
	defer pool.Close()
	a, err := newApp(ctx, pool, pause(cl.callTime), logger, cl.ownRiver)
	if err != nil {
		fmt.Fprintf(stderr, "pg-queue: migrate: %v\n", err)
		return 1
	}
	switch cl.cmd {
	case "migrate":
		logger.Info("migrated: River's tables, the queue's, the outcome table and the orders tables are up to date")
		return 0
	case "receive":
		addr := cl.addr
		if addr == "" {
			addr = cmp(getenv("PAYMENTS_WEBHOOK_ADDR"), ":8080")
		}
		err = a.serve(ctx, getenv("PAYMENTS_WEBHOOK_SECRET"), addr, nil)
	case "work":
		err = a.work(ctx, clientFrom(getenv), cl.every)
	case "await":
		err = a.awaitAndPrint(ctx, clientFrom(getenv), cl.timeout, cl.listAfter, cl.reference, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pg-queue %s: %v\n", cl.cmd, err)
		return 1
	}
	return 0
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// pause stands for the merchant's call to another service.
func pause(d time.Duration) func(context.Context, *payments.Event) error {
	return func(ctx context.Context, _ *payments.Event) error {
		if d <= 0 {
			return nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// clientFrom returns the service's client from PAYMENTS_API_KEY and
// PAYMENTS_BASE_URL, or nil when they are not set.
func clientFrom(getenv func(string) string) *payments.Client {
	key := getenv("PAYMENTS_API_KEY")
	if key == "" {
		return nil
	}
	opts := []payments.Option{}
	if u := getenv("PAYMENTS_BASE_URL"); u != "" {
		opts = append(opts, payments.WithBaseURL(u))
	}
	c, err := payments.NewClient(key, opts...)
	if err != nil {
		return nil
	}
	return c
}

// serve runs the receiver on addr until ctx ends, then finishes the
// deliveries in flight. ready, when not nil, gets the address it listens on.
func (a *app) serve(ctx context.Context, secrets, addr string, ready chan<- string) error {
	if secrets == "" {
		return errors.New("set PAYMENTS_WEBHOOK_SECRET to the endpoint's signing secret (two, comma-separated, while one rotates)")
	}
	verifier, err := webhook.NewSignatureVerifier(strings.Split(secrets, ","))
	if err != nil {
		return fmt.Errorf("PAYMENTS_WEBHOOK_SECRET: %w", err)
	}
	mux, h := a.receiver(verifier)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready <- ln.Addr().String()
	}
	a.logger.Info("receiving webhooks", slog.String("addr", ln.Addr().String()))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err = errors.Join(srv.Shutdown(sctx), h.Shutdown(sctx))
	if err == nil {
		a.logger.Info("receiver stopped: every delivery in flight was answered")
	}
	return err
}

// work runs this process's River workers, and reconcile every interval
// when the service's client is configured, until ctx ends; then it lets
// the running functions finish (up to a minute) before it returns.
func (a *app) work(ctx context.Context, client *payments.Client, every time.Duration) error {
	// region work
	// Start with a context that Ctrl-C and SIGTERM do not cancel: River
	// cancels every running function the moment Start's context ends.
	// Stop, below, is what lets them finish.
	if err := a.queue.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	reconcile := "off (set PAYMENTS_API_KEY and -reconcile-every)"
	if client != nil && every > 0 {
		reconcile = "every " + every.String()
		go a.reconcileEvery(ctx, client, every)
	}
	a.logger.Info("working the queue's events; Ctrl-C or SIGTERM lets the running functions finish",
		slog.String("queue", pgstore.QueueName), slog.String("reconcile", reconcile))
	<-ctx.Done()
	// Stop taking jobs and let the running ones finish; what does not
	// finish in time is rolled back and runs again in another worker.
	a.logger.Info("stopping: no new job; the running functions have a minute to finish")
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := a.queue.Stop(stopCtx); err != nil {
		return fmt.Errorf("stop: %w (the functions that did not finish were rolled back and run again in another worker)", err)
	}
	a.logger.Info("worker stopped: every running function finished")
	return nil
	// endregion
}

// awaitAndPrint prints the payment's final state and the event that
// decided it.
func (a *app) awaitAndPrint(ctx context.Context, client *payments.Client, timeout, listAfter time.Duration, reference string, out io.Writer) error {
	if client == nil {
		return errors.New("set PAYMENTS_API_KEY (and PAYMENTS_BASE_URL) so that await can list the service's events when no webhook comes")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := a.await(ctx, client, listAfter, reference)
	if err != nil {
		return fmt.Errorf("%s: %w (run it again to keep waiting; pg-queue work must be running to process the events)", reference, err)
	}
	_, err = fmt.Fprintf(out, "%s %s %s %s\n", res.Reference, res.ID, res.State, res.EventID)
	return err
}

// poolConfig is DATABASE_URL's pool, with room for the workers: each holds
// a connection while its function runs, and River's own work and the
// deliveries need more. pgxpool's default (4, or the number of CPUs) would
// leave workers waiting for a connection and deliveries answered 503; a
// pool_max_conns in DATABASE_URL is kept as it is.
func poolConfig(dbURL string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(dbURL, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, int32(pgstore.DefaultWorkers+8))
	}
	return cfg, nil
}
