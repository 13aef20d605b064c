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

const usage = "usage: pg-queue [-own-river] migrate | receive | work [-call-time 2s] [-reconcile-every 10m] | await [-timeout 2m] [-list-after 30s] REFERENCE"

// run runs one subcommand until ctx ends and returns the exit code: 0, 1
// when it failed, 2 for a bad command line.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("pg-queue "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	callTime := fs.Duration("call-time", 0, "work: how long the merchant's call to another service takes (a pause standing for an ERP or a mail)")
	every := fs.Duration("reconcile-every", 10*time.Minute, "work: how often to enqueue the service's events no delivery brought (0: never)")
	timeout := fs.Duration("timeout", 2*time.Minute, "await: how long to wait for the outcome")
	listAfter := fs.Duration("list-after", 30*time.Second, "await: list the service's events when no webhook came within this")
	addr := fs.String("addr", "", "receive: the address to listen on (default PAYMENTS_WEBHOOK_ADDR, else :8080)")
	ownRiver := fs.Bool("own-river", false, "the queue on a River client of the program's own, as a program that runs River for other jobs has (river.go)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	cmd := args[0]
	switch {
	case cmd == "await" && fs.NArg() != 1, cmd != "await" && fs.NArg() != 0:
		fmt.Fprintln(stderr, usage)
		return 2
	case cmd != "migrate" && cmd != "receive" && cmd != "work" && cmd != "await":
		fmt.Fprintf(stderr, "pg-queue: unknown subcommand %q\n%s\n", cmd, usage)
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
	a, err := newApp(ctx, pool, pause(*callTime), logger, *ownRiver)
	if err != nil {
		fmt.Fprintf(stderr, "pg-queue: migrate: %v\n", err)
		return 1
	}
	switch cmd {
	case "migrate":
		return 0
	case "receive":
		if *addr == "" {
			*addr = cmp(getenv("PAYMENTS_WEBHOOK_ADDR"), ":8080")
		}
		err = a.serve(ctx, getenv("PAYMENTS_WEBHOOK_SECRET"), *addr, nil)
	case "work":
		err = a.work(ctx, clientFrom(getenv), *every)
	case "await":
		err = a.awaitAndPrint(ctx, clientFrom(getenv), *timeout, *listAfter, fs.Arg(0), stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pg-queue %s: %v\n", cmd, err)
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
	err = srv.Shutdown(sctx)
	return errors.Join(err, h.Shutdown(sctx))
}

// work runs this process's River workers, and reconcile every interval
// when the service's client is configured, until ctx ends; then it lets
// the running functions finish (up to a minute) before it returns.
func (a *app) work(ctx context.Context, client *payments.Client, every time.Duration) error {
	// region work
	if err := a.queue.Start(ctx); err != nil {
		return err
	}
	if client != nil && every > 0 {
		go a.reconcileEvery(ctx, client, every)
	}
	<-ctx.Done()
	// Stop taking jobs and let the running ones finish; what does not
	// finish in time is rolled back and runs again in another worker.
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return a.queue.Stop(stopCtx)
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
