// Command payouts-river pays a CSV file of payouts (recipient_id, amount,
// currency, payout_id) as River jobs on PostgreSQL, with worker processes
// on any number of machines, each payout paid once whichever of them dies:
//
//	payouts-river load -csv FILE [-run NAME]   one job per row, unique by payout id
//	payouts-river work [-workers 10] [-rate 50] [-burst 5]   the workers (one or more processes)
//	payouts-river status -run NAME [-report FILE] [-watch 2s]   progress, the report and the summary
//	payouts-river migrate                      create or upgrade the tables, then exit
//
// Every command migrates first (safe from all at once) and reads the
// database from DATABASE_URL; work reads the service from PAYMENTS_API_KEY
// and PAYMENTS_BASE_URL. work waits for a database that cannot be reached
// as it starts (restarting, not up yet), with back-off from 1 s to 30 s,
// and logs each wait (TestWorkWaitsForTheDatabase); once started, River
// rides out a restart by itself.
//
// load inserts, in one transaction, a row per payout into the payouts
// table and a River job unique by its payout id: loading the file again, or
// from two machines at once, inserts nothing new (TestLoadTwiceInsertsNothing),
// and a payout id already loaded with another amount, recipient or currency
// refuses the whole file. So does any line the workers would be refused
// for (the SDK's own checks, an exponent, more decimal places than the
// currency has): each is named by line and column (TestLoadRefusesTheWholeFile).
//
// work runs River workers. Each job quotes and confirms its payout with
// idempotency keys derived from the payout id and the key generation kept in
// its row (keyFor), so a job that another worker takes over after a kill
// sends the same keys and the service answers with what it did; a write of
// an attempt that River gave up on is refused (fenced). The generation moves
// only after a refusal a later try may cure (insufficient_balance,
// recipient_not_verified, recipient_verification_failed: the job snoozes
// with back-off, then tries under the next keys) or an expired quote (a new
// one at once). A refusal that cannot be cured cancels the job with the
// reason. A confirmed payment's final state comes from the outcome tracker
// (pgstore's outcome table), fed by a periodic River job that lists the
// service's events for the whole cluster, in a queue of its own so that it
// never waits behind the payouts (or by a webhook receiver on the same
// table); a confirmed payout's job looks there and, when the outcome has
// not come, snoozes (its worker goes on to other payouts) and looks again
// after -recheck; it completes in the transaction that records the outcome
// (TestWorkerRefusals, TestQuoteExpiredTakesANewGeneration,
// TestOutcomesKeepUpWhileWorkersAreKilled).
//
// The rate (-rate, -burst) is one limit for all workers of all processes
// and runs on the database: a row of payouts_rate that every HTTP attempt
// reserves its slot from (limiter.go, TestRateLimitSharedByRunsAndWorkers).
// River's per-process MaxWorkers (-workers) bounds the jobs at once, not a
// rate. Each process keeps the SDK's retry budget of its own, and every
// retry waits for the shared rate too.
//
// status shows the run's rows by state (a progress bar on a terminal, one
// line under 80 columns rewritten in place, plain lines otherwise: the rows
// decided and the rows whose money went out, apart, a rate and the time
// left; -watch repeats it until every row is decided, and Ctrl-C stops it
// with exit status 0: TestStatusBarFitsATerminal, TestStatusWatchInterrupted),
// then writes the same CSV report and summary as the single-machine example
// (examples/payouts), from the jobs and the tracker, on any machine, during
// the run and after it (TestStatus). Its exit status: 0 when every row
// completed, 2 when every row is decided and some did not complete, 3 while
// some are not decided yet; 1 when it failed.
//
// TestThreeWorkersKilledAndRestarted pays 1,000 rows (PAYOUTS_RELIABILITY_ROWS;
// fewer by default) with three worker processes, one killed with SIGKILL
// every few seconds and started again, PostgreSQL restarted once and the
// balance running out halfway: every row is paid exactly once.
//
// On one machine, examples/payouts (a journal file, no database) is
// simpler; use this one when a run must outlive a machine or be shared by
// several.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, isTerminal))
}

const usage = "usage: payouts-river load -csv FILE [-run NAME] | work [-workers N] [-rate R] [-burst B] | status -run NAME [-report FILE] [-watch D] | migrate"

// Exit statuses.
const (
	exitCompleted    = 0 // done; status: every row completed
	exitStopped      = 1 // the command failed (bad flags, the database, ...)
	exitNotCompleted = 2 // status: every row is decided, some did not complete
	exitRunAgain     = 3 // status: some rows are not decided yet
)

// options are the flags of every command.
type options struct {
	csvPath, runName, reportPath, limiterName string
	rate                                      float64
	burst                                     int
	watch, stopWait                           time.Duration
	river                                     riverConfig
}

func parse(args []string, stderr io.Writer) (string, options, error) {
	var o options
	if len(args) == 0 {
		return "", o, errors.New(usage)
	}
	fs := flag.NewFlagSet("payouts-river "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.csvPath, "csv", "", "load: the payouts file (recipient_id,amount,currency,payout_id)")
	fs.StringVar(&o.runName, "run", "", "load, status: the run's name (load: default the file's name without .csv)")
	fs.StringVar(&o.reportPath, "report", "payouts-report.csv", "status: the report to write")
	fs.DurationVar(&o.watch, "watch", 0, "status: show the progress every this long until every row is decided (0: once)")
	fs.IntVar(&o.river.workers, "workers", 10, "work: payouts paid at once by this process")
	fs.Float64Var(&o.rate, "rate", 50, "work: requests a second to the service, at most, over every worker of every process")
	fs.IntVar(&o.burst, "burst", 5, "work: requests sent at once, at most, above the rate")
	fs.StringVar(&o.limiterName, "limiter", "payments", "work: the shared limit's name: processes with the same name share one rate")
	fs.DurationVar(&o.river.jobTimeout, "job-timeout", time.Minute, "work: one attempt of a job at most")
	fs.DurationVar(&o.river.rescueAfter, "rescue-after", 5*time.Minute, "work: a job running this long is given to another worker (its worker seems dead); above -job-timeout")
	fs.DurationVar(&o.river.retryMin, "retry-min", time.Second, "work: the first wait before a job whose outcome is unknown runs again; it doubles")
	fs.DurationVar(&o.river.retryMax, "retry-max", 5*time.Minute, "work: the longest such wait")
	fs.DurationVar(&o.river.work.snoozeMin, "refused-wait", 30*time.Second, "work: the first wait before a payout refused for a cause that may pass (insufficient balance) is tried again; it doubles")
	fs.DurationVar(&o.river.work.snoozeMax, "refused-wait-max", 10*time.Minute, "work: the longest such wait")
	fs.DurationVar(&o.river.work.awaitFor, "await", 0, "work: how long a confirmed payout's job waits for its outcome before it lets its worker go (0: it looks once, then again after -recheck)")
	fs.DurationVar(&o.river.work.recheck, "recheck", 5*time.Second, "work: when a job whose outcome has not come looks again")
	fs.DurationVar(&o.river.listEvery, "list-every", 5*time.Second, "work: how often the service's events are listed for the outcomes")
	fs.DurationVar(&o.stopWait, "stop-wait", 30*time.Second, "work: on SIGTERM, how long the running jobs may finish")
	if err := fs.Parse(args[1:]); err != nil {
		return "", o, err
	}
	cmd := args[0]
	r := o.river
	switch {
	case fs.NArg() != 0:
		return "", o, fmt.Errorf("unexpected arguments %q\n%s", fs.Args(), usage)
	case cmd == "load" && o.csvPath == "":
		return "", o, errors.New("load needs -csv FILE")
	case cmd == "status" && o.runName == "":
		return "", o, errors.New("status needs -run NAME (load printed it)")
	case cmd != "load" && cmd != "work" && cmd != "status" && cmd != "migrate":
		return "", o, fmt.Errorf("unknown command %q\n%s", cmd, usage)
	case o.rate <= 0 || o.burst < 1 || r.workers < 1:
		return "", o, errors.New("-rate, -burst and -workers must be positive")
	case r.jobTimeout <= 0 || r.rescueAfter <= r.jobTimeout:
		return "", o, errors.New("-rescue-after must be longer than -job-timeout (positive): a job is given to another worker only once its attempt has surely ended")
	case r.work.awaitFor < 0 || r.work.awaitFor >= r.jobTimeout:
		return "", o, errors.New("-await must be shorter than -job-timeout, and not negative")
	case r.retryMin <= 0 || r.retryMax < r.retryMin || r.work.snoozeMin <= 0 || r.work.snoozeMax < r.work.snoozeMin ||
		r.work.recheck <= 0 || r.listEvery < time.Second || o.watch < 0:
		return "", o, errors.New("-retry-min, -refused-wait, -recheck must be positive, the -max ones not below them, -list-every at least 1s")
	}
	if o.runName == "" {
		o.runName = strings.TrimSuffix(filepath.Base(o.csvPath), ".csv")
	}
	return cmd, o, nil
}

// run runs one command until it ends or ctx does, and returns the exit
// status. tty says whether a writer is a terminal.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, tty func(io.Writer) bool) int {
	cmd, o, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "payouts-river:", err)
		}
		return exitStopped
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	status, err := runCommand(ctx, cmd, o, getenv, stdout, tty, logger)
	if err != nil {
		fmt.Fprintf(stderr, "payouts-river %s: %v\n", cmd, err)
		return exitStopped
	}
	return status
}

func runCommand(ctx context.Context, cmd string, o options, getenv func(string) string, stdout io.Writer, tty func(io.Writer) bool, logger *slog.Logger) (int, error) {
	dbURL := getenv("DATABASE_URL")
	if dbURL == "" {
		return exitStopped, errors.New("set DATABASE_URL to postgres://user:password@host:5432/db")
	}
	var rows []row
	if cmd == "load" { // the file first: a bad file touches nothing
		var err error
		if rows, err = readRows(o.csvPath); err != nil {
			return exitStopped, err
		}
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return exitStopped, fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer pool.Close()
	var client *payments.Client
	if cmd == "work" {
		if getenv("PAYMENTS_API_KEY") == "" {
			return exitStopped, errors.New("set PAYMENTS_API_KEY and PAYMENTS_BASE_URL: the workers pay through the service")
		}
		// region client
		lim := newLimiter(pool, o.limiterName, o.rate, o.burst)
		budget := payments.DefaultRetryBudget()
		opts := []payments.Option{
			payments.WithUserAgent("payouts-river-example"),
			payments.WithRetryBudget(&budget),
			payments.WithMiddleware(lim.middleware), // every attempt waits for the shared rate
		}
		if u := getenv("PAYMENTS_BASE_URL"); u != "" {
			opts = append(opts, payments.WithBaseURL(u))
		}
		if client, err = payments.NewClient(getenv("PAYMENTS_API_KEY"), opts...); err != nil {
			return exitStopped, err
		}
		// endregion
		defer client.Close()
	}
	a, err := newApp(ctx, pool, client, o.river, logger)
	if cmd == "work" {
		// A database that is restarting, or not up yet, is waited for.
		for wait := time.Second; err != nil && dbUnavailable(err) && ctx.Err() == nil; wait = min(2*wait, maxDBWait) {
			logger.Warn("payouts-river work: waiting for the database", slog.Duration("retry_in", wait), slog.String("error", err.Error()))
			if sleep(ctx, wait) != nil {
				break
			}
			a, err = newApp(ctx, pool, client, o.river, logger)
		}
	}
	if err != nil {
		return exitStopped, err
	}
	switch cmd {
	case "load":
		res, err := load(ctx, pool, a.river, o.runName, rows)
		if err != nil {
			return exitStopped, err
		}
		fmt.Fprintf(stdout, "run %s: %d rows loaded as jobs, %d already loaded (not again); follow it with: payouts-river status -run %s -watch 2s\n",
			o.runName, res.Inserted, res.Known, o.runName)
	case "work":
		return exitCompleted, a.work(ctx, o.stopWait)
	case "status":
		return a.status(ctx, o.runName, o.reportPath, o.watch, stdout, tty(stdout))
	}
	return exitCompleted, nil
}

// maxDBWait is the longest wait between two tries to reach the database.
const maxDBWait = 30 * time.Second

// dbUnavailable reports whether err says the database cannot be reached now
// (down, restarting, refusing connections for a while), not that it
// refused what was asked.
func dbUnavailable(err error) bool {
	var connErr *pgconn.ConnectError
	var pgErr *pgconn.PgError
	var netErr net.Error
	switch {
	case errors.As(err, &connErr), errors.As(err, &netErr), pgconn.Timeout(err), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.As(err, &pgErr):
		// 08: connection exceptions; 57P: the server shutting down or
		// starting (cannot_connect_now).
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P")
	}
	return false
}

// isTerminal reports whether w is a terminal (a character device), without
// a dependency.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
