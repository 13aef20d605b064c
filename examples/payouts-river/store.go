package main

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
)

// schemaSQL is the program's own tables, beside River's and the outcome
// tracker's:
//
//   - payouts: one row per payout id, ever: what the file said (run, line,
//     recipient, amount, currency), its River job, and its state, which only
//     the job's current attempt writes (see fenced): the key generation, the
//     last step and its event (as in the single-machine example's journal),
//     the quote, payment, fee, stan, and the final state with the event that
//     decided it. The primary key is what makes loading twice insert nothing.
//     attempt is the fencing token: the River attempt of the job that
//     writes the row now (see claim and fenced).
//   - payouts_rate: the shared rate limiter (limiter.go).
//   - payouts_event_cursor: how far the event lister got (events.go).
//   - payouts_migrated: the builds that migrated the database (migrate).
const schemaSQL = `CREATE TABLE IF NOT EXISTS payouts (
    payout_id    text        PRIMARY KEY,
    run          text        NOT NULL,
    line         integer     NOT NULL,
    recipient_id text        NOT NULL,
    amount       text        NOT NULL,
    currency     text        NOT NULL,
    job_id       bigint,
    generation   integer     NOT NULL DEFAULT 0,
    step         text        NOT NULL DEFAULT '',
    event        text        NOT NULL DEFAULT '',
    code         text        NOT NULL DEFAULT '',
    quote_id     text        NOT NULL DEFAULT '',
    payment_id   text        NOT NULL DEFAULT '',
    fee          text        NOT NULL DEFAULT '',
    stan         text        NOT NULL DEFAULT '',
    state        text        NOT NULL DEFAULT '',
    event_id     text        NOT NULL DEFAULT '',
    reason       text        NOT NULL DEFAULT '',
    refusals     integer     NOT NULL DEFAULT 0,
    updated_at   timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS attempt integer NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS payouts_run_line_idx ON payouts (run, line);
CREATE TABLE IF NOT EXISTS payouts_rate (
    name text        PRIMARY KEY,
    tat  timestamptz NOT NULL
);
ALTER TABLE payouts_rate ADD COLUMN IF NOT EXISTS sent timestamptz NOT NULL DEFAULT '-infinity';
CREATE TABLE IF NOT EXISTS payouts_event_cursor (
    name  text PRIMARY KEY,
    after text NOT NULL
);
CREATE TABLE IF NOT EXISTS payouts_migrated (
    build text PRIMARY KEY
)`

// The events of a payout's row: the journal's of the single-machine
// example.
const (
	eventInitiated = "initiated" // the quote exists: confirm it next
	eventDone      = "done"      // confirmed: the payment is the service's; its outcome follows
	eventFailed    = "failed"    // refused for good: never retried (the job is cancelled)
	eventUnknown   = "unknown"   // no answer: retried with the same keys
	eventOutcome   = "outcome"   // the final state is known (state, event_id)
	// eventRefused: refused for a cause a later try may cure; nothing was
	// paid. The job waits (JobSnooze) and tries the next key generation.
	eventRefused = "refused"
)

// record is a payout's row: what was loaded and where it got to.
type record struct {
	row
	Run                       string
	Line                      int
	JobID                     int64
	Generation                int
	Step, Event, Code         string
	QuoteID, PaymentID        string
	Fee, Stan, State, EventID string
	Reason                    string
	Refusals                  int
	UpdatedAt                 time.Time
}

const recordColumns = `payout_id, run, line, recipient_id, amount, currency, coalesce(job_id, 0) AS job_id, generation, step, event, code,
 quote_id, payment_id, fee, stan, state, event_id, reason, refusals, updated_at`

// scanRecord scans a row of recordColumns, then more (columns after them).
func scanRecord(s pgx.Row, more ...any) (record, error) {
	var r record
	var amount string
	err := s.Scan(append([]any{&r.PayoutID, &r.Run, &r.Line, &r.RecipientID, &amount, &r.Currency, &r.JobID, &r.Generation, &r.Step, &r.Event,
		&r.Code, &r.QuoteID, &r.PaymentID, &r.Fee, &r.Stan, &r.State, &r.EventID, &r.Reason, &r.Refusals, &r.UpdatedAt}, more...)...)
	if err != nil {
		return r, err
	}
	r.Amount, err = decimal.NewFromString(amount)
	return r, err
}

// payoutArgs is a payout's River job: only the payout id (its row holds
// the rest), which is also what makes the job unique.
type payoutArgs struct {
	PayoutID string `json:"payout_id" river:"unique"`
}

// Kind is the job's kind in River's tables.
func (payoutArgs) Kind() string { return "payouts_payout" }

// QueueName is the River queue of the payouts' jobs.
const QueueName = "payouts"

// migrate creates River's tables, the outcome tracker's and the program's.
// It is safe from every process at once: one migrates, the others wait.
//
// A database that this build migrated already (payouts_migrated names the
// build: the schema's version and River's and pgstore's) is left alone
// without a lock: DDL such as CREATE INDEX IF NOT EXISTS locks its table
// even when there is nothing to do, and a worker that restarts often (a
// supervisor after kills) would hold up every other worker each time.
func migrate(ctx context.Context, pool *pgxpool.Pool, outcomes *pgstore.OutcomeStore) error {
	build := migrationBuild()
	var done bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('payouts_migrated') IS NOT NULL`).Scan(&done); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if done {
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM payouts_migrated WHERE build = $1)`, build).Scan(&done); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if done {
			return nil
		}
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	const key = `hashtext('payments-go examples/payouts-river migrate')`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+key+`)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+key+`)`) }()
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("migrate River's tables: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate River's tables: %w", err)
	}
	for _, stmt := range strings.Split(schemaSQL, ";\n") {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("create the payouts tables: %w (does the role have CREATE on the schema?)", err)
		}
	}
	if err := outcomes.Migrate(ctx); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `INSERT INTO payouts_migrated (build) VALUES ($1) ON CONFLICT DO NOTHING`, build); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// schemaVersion is the version of schemaSQL: raise it with every change.
const schemaVersion = 2

// migrationBuild names what migrate creates: the schema's version and the
// versions of the modules whose tables it migrates.
func migrationBuild() string {
	b := fmt.Sprintf("payouts %d", schemaVersion)
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "github.com/riverqueue/river" || m.Path == "github.com/paymentsapi/payments-go/eventstore/pgstore" {
				b += fmt.Sprintf(", %s %s", m.Path, m.Version)
			}
		}
	}
	return b
}

// loadResult says what load did.
type loadResult struct{ Inserted, Known int }

// load inserts each row and its River job, in one transaction: a payout id
// already loaded (by this file or another) inserts nothing, so loading a
// file twice, or two machines loading it at once, pays nothing twice. A
// payout id already loaded with another recipient, amount or currency is an
// error, and then nothing of the file is loaded.
func load(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], run string, rows []row) (loadResult, error) {
	var res loadResult
	tx, err := pool.Begin(ctx)
	if err != nil {
		return res, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var clashes []error
	for i, r := range rows {
		var n int
		err := tx.QueryRow(ctx, `WITH i AS (INSERT INTO payouts (payout_id, run, line, recipient_id, amount, currency)
VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (payout_id) DO NOTHING RETURNING 1) SELECT count(*) FROM i`,
			r.PayoutID, run, i+2, r.RecipientID, r.Amount.String(), r.Currency).Scan(&n)
		if err != nil {
			return res, fmt.Errorf("load %s: %w", r.PayoutID, err)
		}
		if n == 0 {
			res.Known++
			old, err := scanRecord(tx.QueryRow(ctx, `SELECT `+recordColumns+` FROM payouts WHERE payout_id = $1`, r.PayoutID))
			if err != nil {
				return res, fmt.Errorf("load %s: %w", r.PayoutID, err)
			}
			if old.RecipientID != r.RecipientID || !old.Amount.Equal(r.Amount) || old.Currency != r.Currency {
				clashes = append(clashes, fmt.Errorf("line %d: payout id %q was loaded (run %q, line %d) to %s for %s %s, not %s %s to %s",
					i+2, r.PayoutID, old.Run, old.Line, old.RecipientID, old.Amount, old.Currency, r.Amount, r.Currency, r.RecipientID))
			}
			continue
		}
		ins, err := rc.InsertTx(ctx, tx, payoutArgs{PayoutID: r.PayoutID}, &river.InsertOpts{
			Queue: QueueName, UniqueOpts: river.UniqueOpts{ByArgs: true},
		})
		if err != nil {
			return res, fmt.Errorf("load %s: insert its job: %w", r.PayoutID, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE payouts SET job_id = $2 WHERE payout_id = $1`, r.PayoutID, ins.Job.ID); err != nil {
			return res, fmt.Errorf("load %s: %w", r.PayoutID, err)
		}
		res.Inserted++
	}
	if len(clashes) > 0 {
		return loadResult{}, fmt.Errorf("%w (nothing was loaded: give these payouts new ids, or load the file they came from)", errors.Join(clashes...))
	}
	if err := tx.Commit(ctx); err != nil {
		return loadResult{}, fmt.Errorf("load: commit: %w (nothing was loaded; load again)", err)
	}
	return res, nil
}

// errRescued is returned by a write of an attempt that is no longer the
// job's (River's rescuer took the job back, or it was cancelled): nothing is
// written, and the attempt must stop.
var errRescued = errors.New("the job's attempt was rescued or cancelled: this attempt stops and writes nothing")

// claim makes the job's attempt the one that writes the payout's row and
// returns the row: from then on an earlier attempt (a worker River gave up
// on, still running) can write nothing (fenced). An attempt that a later
// one has claimed already gets errRescued.
func claim(ctx context.Context, pool *pgxpool.Pool, job *river.Job[payoutArgs]) (record, error) {
	var attempt int
	rec, err := scanRecord(pool.QueryRow(ctx, `UPDATE payouts SET attempt = greatest(attempt, $2) WHERE payout_id = $1
RETURNING `+recordColumns+`, attempt`, job.Args.PayoutID, job.Attempt), &attempt)
	if err == nil && attempt != job.Attempt {
		err = fmt.Errorf("payout %s, job %d attempt %d (attempt %d claimed it): %w", job.Args.PayoutID, job.ID, job.Attempt, attempt, errRescued)
	}
	return rec, err
}

// fenced runs fn in a transaction that first checks, under the payout
// row's lock, that this attempt is the one that claimed the row and, through
// River (JobGetTx), that the job is still running this attempt, so that an
// attempt River gave up on (a worker that seemed dead) or a cancelled job
// cannot overwrite what the current one wrote. fn's writes commit only if
// the checks passed.
func fenced(ctx context.Context, pool *pgxpool.Pool, job *river.Job[payoutArgs], fn func(pgx.Tx) error) error {
	rc, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("check the job's attempt: %w", err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var claimed int
	if err := tx.QueryRow(ctx, `SELECT attempt FROM payouts WHERE payout_id = $1 FOR UPDATE`, job.Args.PayoutID).Scan(&claimed); err != nil {
		return fmt.Errorf("check the payout's attempt: %w", err)
	}
	now, err := rc.JobGetTx(ctx, tx, job.ID)
	if err != nil {
		return fmt.Errorf("check the job's attempt: %w", err)
	}
	if claimed != job.Attempt || now.State != rivertype.JobStateRunning || now.Attempt != job.Attempt {
		return fmt.Errorf("payout %s, job %d attempt %d (now %s, attempt %d; the payout claimed by attempt %d): %w",
			job.Args.PayoutID, job.ID, job.Attempt, now.State, now.Attempt, claimed, errRescued)
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// save writes rec's progress (everything but what was loaded).
func save(ctx context.Context, tx pgx.Tx, rec record) error {
	_, err := tx.Exec(ctx, `UPDATE payouts SET generation = $2, step = $3, event = $4, code = $5, quote_id = $6, payment_id = $7,
 fee = $8, stan = $9, state = $10, event_id = $11, reason = $12, refusals = $13, updated_at = now() WHERE payout_id = $1`,
		rec.PayoutID, rec.Generation, rec.Step, rec.Event, rec.Code, rec.QuoteID, rec.PaymentID, rec.Fee, rec.Stan, rec.State,
		rec.EventID, rec.Reason, rec.Refusals)
	return err
}
