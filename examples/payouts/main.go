// Command payouts pays every row of a CSV file (recipient_id, amount,
// currency, payout_id) with the payments SDK: each row is initiated, then
// confirmed, by a bounded number of goroutines sharing one Client, under a
// client-side rate limit and the Client's retry budget, with a progress line
// on the terminal.
//
// It is safe to kill at any moment and start again: every outcome is written
// to a journal (JSON lines, synced to disk per record) before it is relied
// on, and each call's idempotency key is derived from the row's payout id
// ("initiate:"+id and "confirm:"+id, as UUIDv5), so a second run skips what
// the journal says is finished and repeats the rest with the keys of the
// first try: the service replays what it did, and no row is paid twice.
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
// With no PAYMENTS_API_KEY set it starts the fake service of paymentstest in
// process and pays a generated file:
//
//	go run ./examples/payouts
//
// Against the service:
//
//	PAYMENTS_API_KEY=... PAYMENTS_BASE_URL=https://... go run ./examples/payouts -csv payouts.csv -journal payouts.journal
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

	payments "github.com/paymentsapi/payments-go"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	unknown, err := run(ctx, os.Args[1:], os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	if unknown > 0 {
		os.Exit(3) // run again to learn the unknown outcomes
	}
}

// config is what the flags say.
type config struct {
	csvPath, journalPath string
	concurrency          int
	rate                 float64
	rows                 int
}

func parseFlags(args []string, out io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("payouts", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.csvPath, "csv", "", "the payouts file: recipient_id,amount,currency,payout_id (generated on the fake service)")
	fs.StringVar(&cfg.journalPath, "journal", "payouts.journal", "the journal of outcomes; keep it until every row is done")
	fs.IntVar(&cfg.concurrency, "concurrency", 16, "payouts in flight at once")
	fs.Float64Var(&cfg.rate, "rate", 50, "requests per second at most, over all goroutines")
	fs.IntVar(&cfg.rows, "rows", 200, "rows to generate on the fake service")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.concurrency < 1 || cfg.rate <= 0 || cfg.rows < 1 {
		return cfg, errors.New("-concurrency, -rate and -rows must be positive")
	}
	return cfg, nil
}

// run pays the file and returns how many rows have an unknown outcome.
func run(ctx context.Context, args []string, out io.Writer) (int, error) {
	cfg, err := parseFlags(args, out)
	if err != nil {
		return 0, err
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
		l, err := startLocal(ctx, &cfg, opts)
		if err != nil {
			return 0, err
		}
		defer l.close()
		client = l.client
		fmt.Fprintf(out, "On the in-process fake service: %d generated rows, journal in a temporary directory\n", cfg.rows)
	} else {
		if cfg.csvPath == "" {
			return 0, errors.New("-csv is required against the service")
		}
		if client, err = payments.NewClientFromEnv(opts...); err != nil {
			return 0, err
		}
	}
	rows, err := readRows(cfg.csvPath)
	if err != nil {
		return 0, err
	}
	j, state, err := openJournal(cfg.journalPath)
	if err != nil {
		return 0, err
	}
	defer j.close()
	return payAll(ctx, &payer{client: client, journal: j}, rows, state, cfg.concurrency, out)
}

// errJournal is the cause with which payAll stops when the journal fails.
var errJournal = errors.New("the journal could not record a payout")

// payAll pays the rows that the journal does not say are finished, with
// concurrency goroutines, and prints the summary.
func payAll(ctx context.Context, p *payer, rows []row, state map[string]record, concurrency int, out io.Writer) (int, error) {
	// The first journal failure stops the producer and every worker: a
	// payment whose outcome cannot be recorded must not be followed by more.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	prog := newProgress(out, len(rows))
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
	prog.run()
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
			}
		}()
	}
	wg.Wait()
	prog.end()
	if fatalErr != nil {
		return 0, fatalErr
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("stopped: %w; run again to pay the rest", err)
	}
	if n := prog.unknown.Load(); n > 0 {
		fmt.Fprintf(out, "%d outcomes unknown: run again to learn them (the journal keeps their keys)\n", n)
	}
	if n := prog.refused.Load(); n > 0 {
		fmt.Fprintf(out, "%d refused, nothing paid, for a cause that can be fixed (the journal's reasons: balance, recipient verification): fix it and run again; they are tried with new keys\n", n)
	}
	return int(prog.unknown.Load()), nil
}
