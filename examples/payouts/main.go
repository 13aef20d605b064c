// Command payouts pays every row of a CSV file (recipient_id, amount,
// currency, payout_id) with the payments SDK, then waits for each payment's
// final outcome and writes a report. Each row is initiated, then confirmed,
// by a bounded number of goroutines sharing one Client, under a client-side
// rate limit and the Client's retry budget, with a progress line on the
// terminal.
//
// A confirmed payment is usually pending: how it ended (completed, failed,
// rejected) comes later, as an event. The program has no webhook receiver,
// so an outcome.Tracker asks the service's event list for them (-wait
// bounds the wait), with a progress line. Then it writes the report, a CSV
// (-report: per row the recipient, amount, fee, final state, payment id,
// stan, deciding event id and reason) and a summary on screen: the counts
// and the totals of amount and fee per currency and state, which add up to
// the file's, and the rows that did not complete, with the reason.
//
// It is safe to kill at any moment and start again: every outcome is written
// to a journal (JSON lines, synced to disk per record) before it is relied
// on, and each call's idempotency key is derived from the row's payout id
// ("initiate:"+id and "confirm:"+id, as UUIDv5), so a second run skips what
// the journal says is finished and repeats the rest with the keys of the
// first try: the service replays what it did, and no row is paid twice.
// The final outcomes go to the journal too, so a run started again awaits
// only the payments still open, and says what the journal supplied.
// Rows whose outcome stayed unknown (the service could not be reached) are
// counted as such; run again to learn them.
//
// The service replays a refusal for its key as well. A row refused for a
// cause a later try may cure (insufficient_balance, recipient_not_verified,
// recipient_verification_failed) is counted as refused: fix the cause and
// run again, and it is tried under the next key generation, recorded in the
// journal. A quote that expired (a run restarted more than five minutes
// after a crash) gets a new one, under the next generation, at once. A new
// generation starts only after a refusal, never after an unknown outcome.
//
// Exit status: 0 when every row completed; 1 when the program stopped (bad
// flags or file, a journal that cannot be written, an interrupt); 2 when
// every row is decided and some did not complete (failed, rejected,
// refused: the summary names them); 3 when some outcomes are not known yet
// (pending or unknown): run again to learn them.
//
// With no PAYMENTS_API_KEY set it starts the fake service of paymentstest in
// process and pays a generated file, a few of whose rows fail on purpose:
//
//	go run ./examples/payouts
//
// This program is for one machine: its journal is a file on that machine's
// disk. When a run must be shared by several machines or outlive the one
// that started it, use examples/payouts-river: the same file, keys and
// report, as River jobs on PostgreSQL, with a rate limit shared by every
// worker.
//
// Against the sandbox, make a demo file of 50 recipients saved there, then
// pay it:
//
//	PAYMENTS_API_KEY=... PAYMENTS_BASE_URL=https://... go run ./examples/payouts -demo-csv 50 -csv demo.csv
//	PAYMENTS_API_KEY=... PAYMENTS_BASE_URL=https://... go run ./examples/payouts -csv demo.csv -journal demo.journal
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"sync"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	status, err := run(ctx, os.Args[1:], os.Stdout)
	if err != nil {
		log.Fatal(err) // exit status 1
	}
	os.Exit(status)
}

// config is what the flags say.
type config struct {
	csvPath, journalPath, reportPath string
	concurrency                      int
	rate                             float64
	rows, demo                       int
	wait                             time.Duration
}

func parseFlags(args []string, out io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("payouts", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.csvPath, "csv", "", "the payouts file: recipient_id,amount,currency,payout_id (generated on the fake service)")
	fs.StringVar(&cfg.journalPath, "journal", "payouts.journal", "the journal of outcomes; keep it until every row is done")
	fs.StringVar(&cfg.reportPath, "report", "payouts-report.csv", "the report to write: each row's final state, fee, stan and deciding event")
	fs.IntVar(&cfg.concurrency, "concurrency", 16, "payouts in flight at once")
	fs.Float64Var(&cfg.rate, "rate", 50, "requests per second at most, over all goroutines")
	fs.IntVar(&cfg.rows, "rows", 200, "rows to generate on the fake service")
	fs.DurationVar(&cfg.wait, "wait", 10*time.Minute, "how long to wait for the outcomes of confirmed payments; run again to learn the rest")
	fs.IntVar(&cfg.demo, "demo-csv", 0, "save this many demo recipients on the sandbox, write a payouts file to them at -csv, and stop")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.concurrency < 1 || cfg.rate <= 0 || cfg.rows < 1 || cfg.wait <= 0 || cfg.demo < 0 {
		return cfg, errors.New("-concurrency, -rate, -rows and -wait must be positive, -demo-csv not negative")
	}
	return cfg, nil
}

// run pays the file, awaits the outcomes, writes the report and returns
// the exit status (exitCompleted, exitNotCompleted or exitRunAgain); an
// error means the program stopped (exitStopped).
func run(ctx context.Context, args []string, out io.Writer) (int, error) {
	cfg, err := parseFlags(args, out)
	if err != nil {
		return exitStopped, err
	}
	// region client
	// The retry budget is on by default; it is spelled out here because a
	// bulk job is what it is for: when the service fails, the goroutines
	// stop retrying together instead of multiplying the load.
	budget := payments.DefaultRetryBudget()
	opts := []payments.Option{
		payments.WithUserAgent("payouts-example"),
		payments.WithRetryBudget(&budget),
		payments.WithRateLimit(cfg.rate, cfg.concurrency),
	}
	// endregion
	var client *payments.Client
	if os.Getenv("PAYMENTS_API_KEY") == "" {
		if cfg.demo > 0 {
			return exitStopped, errors.New("-demo-csv saves recipients on the sandbox: set PAYMENTS_API_KEY and PAYMENTS_BASE_URL (without them the program generates its own file on an in-process fake)")
		}
		l, err := startLocal(ctx, &cfg, opts)
		if err != nil {
			return exitStopped, err
		}
		defer l.close()
		client = l.client
		fmt.Fprintf(out, "On the in-process fake service: %d generated rows, journal in a temporary directory\n", cfg.rows)
	} else {
		if cfg.csvPath == "" {
			return exitStopped, errors.New("-csv is required against the service (-demo-csv N -csv FILE makes a demo file on the sandbox)")
		}
		if client, err = payments.NewClientFromEnv(opts...); err != nil {
			return exitStopped, err
		}
		if cfg.demo > 0 {
			if err := writeDemo(ctx, client, cfg.demo, cfg.csvPath); err != nil {
				return exitStopped, err
			}
			fmt.Fprintf(out, "Wrote %d demo payouts to %s, to %d recipients saved on the service; pay them with -csv %s\n",
				cfg.demo, cfg.csvPath, cfg.demo, cfg.csvPath)
			return exitCompleted, nil
		}
	}
	rows, err := readRows(cfg.csvPath)
	if err != nil {
		return exitStopped, err
	}
	j, state, err := openJournal(cfg.journalPath)
	if err != nil {
		return exitStopped, err
	}
	defer j.close()
	printResumed(out, cfg.journalPath, rows, state)
	state, err = payAll(ctx, &payer{client: client, journal: j}, rows, state, cfg.concurrency, out)
	if err != nil {
		return exitStopped, err
	}
	if state, err = awaitOutcomes(ctx, newTracker(client), j, rows, state, cfg.wait, out); err != nil {
		return exitStopped, err
	}
	rep := buildReport(rows, state)
	if err := writeReport(cfg.reportPath, rep); err != nil {
		return exitStopped, err
	}
	printSummary(out, rep, cfg.reportPath)
	return exitStatus(rep), nil
}

// printResumed says what the journal supplied, when it holds any of rows.
func printResumed(out io.Writer, path string, rows []row, state map[string]record) {
	var decided, confirmed, refused, again int
	for _, r := range rows {
		switch state[r.PayoutID].Event {
		case eventOutcome, eventFailed:
			decided++
		case eventDone:
			confirmed++
		case eventRefused:
			refused++
		case eventInitiated, eventUnknown:
			again++
		}
	}
	if known := decided + confirmed + refused + again; known > 0 {
		fmt.Fprintf(out, "Resumed from the journal %s: %d of %d rows in it: %d decided (not sent again), %d confirmed (their outcome is awaited), "+
			"%d refused (tried again under new keys), %d to repeat with their keys; %d not started\n",
			path, known, len(rows), decided, confirmed, refused, again, len(rows)-known)
	}
}

// errJournal is the cause with which payAll stops when the journal fails.
var errJournal = errors.New("the journal could not record a payout")

// payAll pays the rows that the journal does not say are finished, with
// concurrency goroutines, prints the progress line, and returns the last
// record of each row.
func payAll(ctx context.Context, p *payer, rows []row, state map[string]record, concurrency int, out io.Writer) (map[string]record, error) {
	// The first journal failure stops the producer and every worker: a
	// payment whose outcome cannot be recorded must not be followed by more.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	prog := newProgress(len(rows))
	next := make(map[string]record, len(state))
	for id, rec := range state {
		next[id] = rec
	}
	todo := make(chan row)
	go func() {
		defer close(todo)
		for _, r := range rows {
			if last := state[r.PayoutID]; last.final() {
				prog.count(last.Event, false)
				continue
			}
			select {
			case todo <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	tick := startTicker(out, prog.line)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		fatalErr error
	)
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range todo {
				rec, err := p.pay(ctx, r, state[r.PayoutID])
				if err != nil {
					if context.Cause(ctx) == nil { // the journal failed: stop everything (later errors are its consequence)
						mu.Lock()
						fatalErr = errors.Join(fatalErr, fmt.Errorf("payout %s: %w", r.PayoutID, err))
						mu.Unlock()
						stop(errJournal)
					}
					continue
				}
				prog.count(rec.Event, true)
				mu.Lock()
				next[r.PayoutID] = rec
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	tick.end()
	if fatalErr != nil {
		return nil, fatalErr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("stopped: %w; run again to pay the rest", err)
	}
	return next, nil
}
