package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	outcomes "github.com/paymentsapi/payments-go/outcome"
)

// envOutcomeStore is where stuck reads the store's URL when --store is not
// given: the URL carries a password, better kept out of shell history.
const envOutcomeStore = "PAYMENTS_OUTCOME_STORE"

const paymentsUsage = `payments payments: the payments your receivers track.

Usage:
  payments payments stuck --older-than 1h   payments with no final outcome, recipients unverified
`

const stuckUsage = `payments payments stuck: list the payments confirmed (or, never confirmed, first seen)
more than --older-than ago that have no final outcome, and the recipients first seen more
than --older-than ago that are still unverified, from the store of your receivers' outcome
tracker (package outcome).

Usage:
  payments payments stuck [--older-than 1h] [--store URL] [--table NAME | --prefix PREFIX] [--json]

The store is a PostgreSQL URL (postgres://user:password@host/db?sslmode=..., the table of
pgstore.OutcomeStore) or a Redis URL (redis://:password@host:6379/0, or rediss:// for TLS;
the keys of redisstore.OutcomeStore). Give it with --store, or in PAYMENTS_OUTCOME_STORE to
keep its password out of shell history. A MemoryStore lives inside one process: there is
nothing to read from outside it.

A payment counts from when Tracker.Confirmed recorded its confirmation; one never confirmed
(known only from its events: a quote not confirmed, or a Confirm not recorded) counts from
when its first event was recorded, and says "seen, never confirmed". Each line shows the
kind, id, reference, state, since when, and the events recorded; --json prints one JSON
object per line instead (the tracker's record). Exit code 0 whether or not any is stuck.
`

// payments runs "payments payments SUBCOMMAND".
func (c *cli) payments(ctx context.Context, args []string) error {
	switch sub := firstArg(args); sub {
	case "stuck":
		return c.stuck(ctx, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stdout, paymentsUsage)
		return nil
	case "":
		return usagef("payments: give a subcommand (stuck; see payments payments --help)")
	default:
		return usagef("payments: unknown payments subcommand %q (stuck; see payments payments --help)", sub)
	}
}

func (c *cli) stuck(ctx context.Context, args []string) error {
	fs := c.newFlagSet("payments stuck", stuckUsage)
	olderThan := fs.Duration("older-than", time.Hour, "how long ago a payment was confirmed (or a recipient first seen)")
	storeURL := fs.String("store", "", "the store's URL (postgres://, redis://, rediss://); default $"+envOutcomeStore)
	table := fs.String("table", pgstore.DefaultOutcomeTable, "the PostgreSQL table (pgstore.WithTable)")
	prefix := fs.String("prefix", redisstore.DefaultOutcomePrefix, "the Redis key prefix (redisstore.WithPrefix)")
	asJSON := fs.Bool("json", false, "print one JSON object per line")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("payments stuck takes no arguments, got %q", pos)
	}
	if *olderThan < 0 || *timeout <= 0 {
		return usagef("payments stuck: --older-than must be 0 or more, --timeout positive")
	}
	raw := *storeURL
	if raw == "" {
		raw = c.getenv(envOutcomeStore)
	}
	store, closeStore, err := openStuckStore(raw, *table, *prefix, *timeout)
	if err != nil {
		return err
	}
	defer closeStore()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	out, err := outcomes.NewTracker(store).Stuck(ctx, *olderThan)
	if err != nil {
		return errors.New("payments stuck: " + redactPassword(err.Error(), raw))
	}
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		for _, o := range out {
			if err := enc.Encode(o); err != nil {
				return err
			}
		}
		return nil
	}
	printStuck(c, out, *olderThan, time.Now())
	return nil
}

// printStuck prints one line per outcome and a summary.
func printStuck(c *cli, out []outcomes.Outcome, olderThan time.Duration, now time.Time) {
	if len(out) == 0 {
		fmt.Fprintf(c.stdout, "nothing stuck for more than %s\n", olderThan)
		return
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tID\tREFERENCE\tSTATE\tSINCE\tFOR\tEVENTS")
	var payments, recipients int
	for _, o := range out {
		since, what := o.FirstSeen, "first seen"
		if o.Kind == outcomes.KindPayment {
			if !o.ConfirmedAt.IsZero() {
				since, what = o.ConfirmedAt, "confirmed"
			} else {
				what = "seen, never confirmed:"
			}
			payments++
		} else {
			recipients++
		}
		var events []string
		for _, s := range o.Steps {
			events = append(events, show(string(s.EventType))+"="+show(s.EventID))
		}
		ref := "-"
		if o.Reference != "" {
			ref = show(o.Reference)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s %s\t%s\t%s\n", show(string(o.Kind)), show(o.ID), ref, show(string(o.State)), what,
			since.UTC().Format(time.RFC3339), now.Sub(since).Truncate(time.Second), strings.Join(events, ","))
	}
	_ = w.Flush()
	fmt.Fprintf(c.stdout, "%d stuck for more than %s: %d payments without a final outcome, %d recipients unverified\n",
		len(out), olderThan, payments, recipients)
}
