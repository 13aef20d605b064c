package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
)

// DefaultOutcomeTable is the table an OutcomeStore uses unless WithTable
// says otherwise.
const DefaultOutcomeTable = "payments_outcomes"

// OutcomeStore is an outcome.Store in a PostgreSQL table, shared by every
// replica: the outcome tracker's rows beside the claim store's, on the same
// pool. Besides the outcome.Store methods (for outcome.NewTracker), ApplyTx
// records an event inside a caller's transaction: a Queue's workers record
// each event so, in the transaction that runs the merchant's function and
// completes the job. Make it with NewOutcomeStore; create its table with
// Migrate. It is safe for concurrent use.
//
// Each row holds one outcome as JSON with a version. An update reads the
// row (a plain SELECT: no lock, no write), decides, and writes only when the
// event changes the outcome: an INSERT ... ON CONFLICT DO NOTHING for a new
// row, an UPDATE ... WHERE version = the version read for an existing one;
// when another replica wrote in between, it reads again and decides again.
// So a duplicate or an event that changes nothing costs one SELECT and no
// durable write. Inside a caller's transaction the same holds under READ
// COMMITTED (PostgreSQL's default); under REPEATABLE READ or SERIALIZABLE a
// concurrent write fails the update with the database's error, and the
// handler's retry runs it again. Tests: TestOutcomeStoreNoWriteForDuplicate
// (the statements sent), TestOutcomeStoreConformance (concurrent updates
// from two pools all land), TestOutcomeStoreReplicas and
// TestQueueAwaitNeverBeforeTheFunctionCommitted.
type OutcomeStore struct {
	pool    *pgxpool.Pool
	table   string
	timeout time.Duration
	logger  *slog.Logger
	notify  bool
	// afterCommit: writes do not NOTIFY in their transaction; the
	// Queue notifies after its commits (notifyCommitted), and Subscribe
	// listens as with notify.
	afterCommit bool
	q           outcomeQueries
	// notifyMu guards the NOTIFY in flight (closed as it ends), the
	// commits sendNotify was called for, and how many of them the last
	// NOTIFY started covers.
	notifyMu         sync.Mutex
	inFlight         chan struct{}
	commits, covered uint64
}

var outcomeTableRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,40}(\.[a-z_][a-z0-9_]{0,40})?$`)

// NewOutcomeStore returns an outcome store on pool, configured by
// WithTable (default DefaultOutcomeTable), WithTimeout and WithLogger; the
// options of a ClaimStore alone (WithLease, WithRetention, WithPurgeEvery) are
// refused. Its errors match ErrInvalidOption.
//
// Every write of a final outcome NOTIFYs the table's channel at its commit,
// so that Await in another replica returns at once (Subscribe) instead of at
// its next read of the table (TestOutcomeAwaitWokenByNotify). PostgreSQL
// serialises the commits of the transactions that notify: a receiver
// feeding the tracker processed 4% fewer events per second with it than
// without on a quiet machine, half as many on a loaded one (BENCHMARKS.md).
func NewOutcomeStore(pool *pgxpool.Pool, opts ...Option) (*OutcomeStore, error) {
	if pool == nil {
		return nil, invalid("NewOutcomeStore with a nil pool")
	}
	o := options{table: DefaultOutcomeTable, timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if len(o.claimOnly) > 0 {
		return nil, invalid("%s configure a claim store (NewClaimStore), not an outcome store", strings.Join(o.claimOnly, ", "))
	}
	s := &OutcomeStore{pool: pool, table: o.table, timeout: o.timeout, logger: o.logger, notify: !o.noNotify, afterCommit: o.afterCommit}
	if !outcomeTableRE.MatchString(s.table) {
		return nil, invalid("outcome table name %q: each part must match [a-z_][a-z0-9_]* and be at most 41 bytes, at most one dot", s.table)
	}
	if s.timeout <= 0 {
		return nil, invalid("outcome timeout %v: must be positive", s.timeout)
	}
	s.q = buildOutcomeQueries(s.table, s.notify && !s.afterCommit)
	return s, nil
}

type outcomeQueries struct {
	create, load, insert, update, open string
	channel, listen, notifyNow         string
}

func buildOutcomeQueries(table string, notify bool) outcomeQueries {
	parts := strings.Split(table, ".")
	quoted := `"` + strings.Join(parts, `"."`) + `"`
	h := fnv.New64a()
	h.Write([]byte(table))
	channel := fmt.Sprintf("payments_outcomes_%016x", h.Sum64()) // at most 63 bytes, any table name
	written := "SELECT count(*) FROM w"
	if notify {
		written = "SELECT count(*) FROM (SELECT CASE WHEN $4 THEN pg_notify('" + channel + "', '') END FROM w) n"
	}
	index := func(suffix string) string { return `"` + parts[len(parts)-1] + suffix + `"` }
	// record is json, not jsonb: jsonb refuses the escape \u0000, which an
	// event id may hold (TestOddEventIDsThroughTheHandler); no statement
	// looks inside it. A table made by an earlier release keeps its jsonb.
	return outcomeQueries{
		create: `CREATE TABLE IF NOT EXISTS ` + quoted + ` (
    id           text        PRIMARY KEY,
    kind         text        NOT NULL,
    reference    text        NOT NULL DEFAULT '',
    final        boolean     NOT NULL,
    confirmed_at timestamptz,
    first_seen   timestamptz NOT NULL,
    version      bigint      NOT NULL,
    record       json        NOT NULL
);
CREATE INDEX IF NOT EXISTS ` + index("_reference_idx") + ` ON ` + quoted + ` (reference) WHERE reference <> '';
CREATE INDEX IF NOT EXISTS ` + index("_open_idx") + ` ON ` + quoted + ` (kind) WHERE NOT final`,
		load: `SELECT version, record FROM ` + quoted + ` WHERE id = $1 OR (reference = $1 AND reference <> '')
ORDER BY id = $1 DESC, final DESC, confirmed_at IS NOT NULL DESC, first_seen DESC, id DESC LIMIT 1`,
		// Each write returns how many rows it wrote and notifies the
		// table's channel (at commit) when it wrote a final outcome:
		// what Await waits for.
		insert: `WITH w AS (INSERT INTO ` + quoted + ` (id, kind, reference, final, confirmed_at, first_seen, version, record)
VALUES ($1, $2, $3, $4, $5, $6, 1, $7) ON CONFLICT (id) DO NOTHING RETURNING 1)
` + written,
		update: `WITH w AS (UPDATE ` + quoted + ` SET kind = $2, reference = $3, final = $4, confirmed_at = $5, first_seen = $6,
version = version + 1, record = $7 WHERE id = $1 AND version = $8 RETURNING 1)
` + written,
		channel: channel,
		listen:  `LISTEN "` + channel + `"`,
		// One round trip, and no wait for a WAL flush: the transaction
		// writes nothing but its commit record, and a notification lost
		// in a crash only delays a waiter to its next read.
		notifyNow: `BEGIN; SET LOCAL synchronous_commit = off; NOTIFY "` + channel + `"; COMMIT`,
		open: `SELECT record FROM ` + quoted + ` WHERE NOT final AND ((kind = 'payment' AND confirmed_at < $1)
OR (kind = 'payment' AND confirmed_at IS NULL AND first_seen < $2) OR (kind = 'recipient' AND first_seen < $2))`,
	}
}

// MigrationSQL returns the statements Migrate runs, for a DBA to
// apply by hand.
func (s *OutcomeStore) MigrationSQL() string { return s.q.create + ";\n" }

// Migrate creates the outcome table and its indexes when they do not exist.
// It is idempotent and safe to run from every replica at once (an advisory
// lock makes concurrent runs wait for each other); bounded by ctx alone.
func (s *OutcomeStore) Migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate outcome table %s: %w", s.table, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('payments-go pgstore migrate outcomes ' || $1))`, s.table); err != nil {
		return fmt.Errorf("pgstore: migrate outcome table %s: %w", s.table, err)
	}
	for _, stmt := range strings.Split(s.q.create, ";\n") {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("pgstore: migrate outcome table %s: %w", s.table, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgstore: migrate outcome table %s: %w", s.table, err)
	}
	return nil
}

// querier is what the store needs of a pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func (s *OutcomeStore) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// Load returns the outcome of an id, or of a payment reference (as
// outcome.PickByReference picks among several payments with it).
func (s *OutcomeStore) Load(ctx context.Context, key string) (outcome.Outcome, error) {
	o, _, err := s.load(ctx, s.pool, key)
	return o, err
}

func (s *OutcomeStore) load(ctx context.Context, q querier, key string) (outcome.Outcome, int64, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var version int64
	var record []byte
	err := q.QueryRow(ctx, s.q.load, key).Scan(&version, &record)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return outcome.Outcome{}, 0, outcome.ErrNotFound
	case err != nil:
		return outcome.Outcome{}, 0, fmt.Errorf("pgstore: loading outcome %s: %w", key, err)
	}
	var o outcome.Outcome
	if err := json.Unmarshal(record, &o); err != nil {
		return outcome.Outcome{}, 0, fmt.Errorf("pgstore: outcome %s: the stored record does not decode: %w", key, err)
	}
	return o, version, nil
}

// Update applies fn to the outcome of id: see OutcomeStore for how.
func (s *OutcomeStore) Update(ctx context.Context, id string, fn outcome.UpdateFunc) (outcome.Outcome, error) {
	return s.update(ctx, s.pool, id, fn, false)
}

// updateTx is Update inside tx, which the caller commits, for ApplyTx: it
// tries the INSERT first (see update).
func (s *OutcomeStore) updateTx(ctx context.Context, tx pgx.Tx, id string, fn outcome.UpdateFunc) (outcome.Outcome, error) {
	return s.update(ctx, tx, id, fn, true)
}

// updateInSavepoint is updateTx in a savepoint of tx, rolled back when the
// update fails, so that a refused write leaves tx usable.
func (s *OutcomeStore) updateInSavepoint(ctx context.Context, tx pgx.Tx, id string, fn outcome.UpdateFunc) (outcome.Outcome, error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return outcome.Outcome{}, fmt.Errorf("pgstore: recording outcome %s: begin a savepoint: %w", id, err)
	}
	o, err := s.updateTx(ctx, sp, id, fn)
	if err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		defer cancel()
		if rerr := sp.Rollback(rctx); rerr != nil {
			return outcome.Outcome{}, fmt.Errorf("pgstore: recording outcome %s: %w (and rolling back its savepoint: %w)", id, err, rerr)
		}
		return outcome.Outcome{}, err
	}
	if err := sp.Commit(ctx); err != nil {
		return outcome.Outcome{}, fmt.Errorf("pgstore: recording outcome %s: release its savepoint: %w", id, err)
	}
	return o, nil
}

// maxUpdateRounds bounds the reads of one update that other writers keep
// overtaking.
const maxUpdateRounds = 100

// update reads the outcome of id, applies fn and writes what it returns,
// as OutcomeStore says. With insertFirst, its first round reads nothing:
// it applies fn to no outcome and INSERTs the result, one statement when
// id has no row yet (an event's first, as a Queue's worker mostly sees);
// when the INSERT finds a row (it writes nothing then), or fn writes
// nothing of no outcome, the next rounds read and decide as usual.
func (s *OutcomeStore) update(ctx context.Context, q querier, id string, fn outcome.UpdateFunc, insertFirst bool) (outcome.Outcome, error) {
	for round := 0; round < maxUpdateRounds; round++ {
		guess := insertFirst && round == 0
		var cur outcome.Outcome
		var version int64
		var err error
		if !guess {
			cur, version, err = s.load(ctx, q, id)
		}
		if errors.Is(err, outcome.ErrNotFound) || (err == nil && cur.ID != id) {
			cur, version, err = outcome.Outcome{}, 0, nil // a reference matched: not this id's row
		}
		if err != nil {
			return outcome.Outcome{}, err
		}
		next, write, err := fn(cur)
		if guess && (err != nil || !write) {
			continue // fn may write, or not fail, on the outcome the row holds
		} else if err != nil || !write {
			return cur, err
		}
		record, err := json.Marshal(next)
		if err != nil {
			return outcome.Outcome{}, fmt.Errorf("pgstore: outcome %s: %w", id, err)
		}
		var confirmed *time.Time
		if !next.ConfirmedAt.IsZero() {
			confirmed = &next.ConfirmedAt
		}
		args := []any{id, string(next.Kind), next.Reference, next.State.Final(), confirmed, next.FirstSeen, record}
		sql := s.q.insert
		if version > 0 {
			sql, args = s.q.update, append(args, version)
		}
		sctx, cancel := s.bound(ctx)
		var written int64
		err = q.QueryRow(sctx, sql, args...).Scan(&written)
		cancel()
		if err != nil {
			if refused := cannotHold(err); refused != "" {
				return outcome.Outcome{}, fmt.Errorf("%w: %s %s: the database refuses its record (%s): %w",
					outcome.ErrInvalidEvent, next.Kind, id, refused, err)
			}
			return outcome.Outcome{}, fmt.Errorf("pgstore: recording outcome %s: %w", id, err)
		}
		if written == 1 {
			return next, nil
		}
		// Another replica wrote first: read its outcome and decide again.
	}
	return outcome.Outcome{}, fmt.Errorf("pgstore: recording outcome %s: overtaken by other writers %d times", id, maxUpdateRounds)
}

// cannotHold says why the database refused a record's values, or "" when
// err is not such a refusal: a data exception (SQLSTATE class 22), as a
// database whose encoding is not UTF8 raises for a reference it has no
// character for ("付款-北京-42" in a LATIN1 database). Retrying cannot cure
// it: the event is untrackable (outcome.EffectUntrackable), not a failure.
func cannotHold(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22") {
		return "SQLSTATE " + pgErr.Code
	}
	return ""
}

// holdsAnyText reports whether the database of tx's connection stores any
// text the tracker records: UTF8 does, and so does SQL_ASCII (bytes as
// they come; the tracker never records a NUL). In any other encoding a
// write may be refused (cannotHold), which aborts the transaction it is in.
func holdsAnyText(tx pgx.Tx) bool {
	switch tx.Conn().PgConn().ParameterStatus("server_encoding") {
	case "UTF8", "SQL_ASCII":
		return true
	}
	return false
}

// Open returns the outcomes that are not final (see outcome.Store).
func (s *OutcomeStore) Open(ctx context.Context, confirmedBefore, seenBefore time.Time) ([]outcome.Outcome, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, s.q.open, confirmedBefore, seenBefore)
	if err != nil {
		return nil, fmt.Errorf("pgstore: listing open outcomes: %w", err)
	}
	records, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("pgstore: listing open outcomes: %w", err)
	}
	out := make([]outcome.Outcome, 0, len(records))
	for _, r := range records {
		var o outcome.Outcome
		if err := json.Unmarshal(r, &o); err != nil {
			return nil, fmt.Errorf("pgstore: an open outcome's stored record does not decode: %w", err)
		}
		out = append(out, o)
	}
	return out, nil
}

// Subscribe makes Await in any replica return as soon as a final outcome
// is written (every OutcomeStore notifies; see NewOutcomeStore): it LISTENs
// on the table's channel, on a connection taken from the pool for as long as
// some Await waits (and a little longer; see outcome.Subscriber), and calls
// changed for each notification.
func (s *OutcomeStore) Subscribe(ctx context.Context, changed func()) error {
	if !s.notify {
		<-ctx.Done()
		return ctx.Err()
	}
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: subscribing to outcomes: %w", err)
	}
	conn := pc.Hijack() // it will be LISTENing: never back into the pool
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	sctx, cancel := s.bound(ctx)
	_, err = conn.Exec(sctx, s.q.listen)
	cancel()
	if err != nil {
		return fmt.Errorf("pgstore: subscribing to outcomes: %w", err)
	}
	changed() // writes before the LISTEN were not seen
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("pgstore: waiting for outcome notifications: %w", err)
		}
		changed()
	}
}

// ApplyTx records ev in tx, as outcome.Tracker.Apply does, with the same
// results: the outcome after the event and the event's effect, or the
// database's error. Conflicts are logged (WithLogger).
//
// An event it cannot record (its data has no id, or a reference, status or
// flag the tracker cannot read; or values the database refuses, such as a
// Chinese reference in a LATIN1 database) returns
// outcome.EffectUntrackable and a nil error, logged at warning level
// (outcome.LogUntrackable): nothing is recorded, and tx is as usable as
// before, so that the caller commits the merchant's writes and completes
// the job all the same. It writes first: an event whose subject has no
// outcome yet (mostly an event's first) costs one INSERT and no read; when
// that INSERT finds a row, it writes nothing, and ApplyTx reads and decides
// as Update does (TestOutcomeStoreApplyTxInsertsFirst). In a database
// whose encoding is UTF8 (or
// SQL_ASCII) every reference the SDK accepts is recorded; in any other, the
// write runs in a savepoint so that a refusal leaves tx usable. Tests:
// TestOutcomeStoreApplyTxReferences, TestOutcomeStoreApplyTxUntrackable,
// TestOutcomeStoreApplyTxLatin1Database, TestQueueReferencesInAnyScript.
func (s *OutcomeStore) ApplyTx(ctx context.Context, tx pgx.Tx, ev *payments.Event) (outcome.Outcome, outcome.Effect, error) {
	sub, ok, err := outcome.SubjectOf(ev)
	if err != nil {
		outcome.LogUntrackable(ctx, s.logger, ev, err)
		return outcome.Outcome{}, outcome.EffectUntrackable, nil
	}
	if !ok {
		return outcome.Outcome{}, outcome.EffectNone, nil
	}
	now := time.Now()
	effect := outcome.EffectNone
	decide := func(cur outcome.Outcome) (outcome.Outcome, bool, error) {
		next, e, err := outcome.Decide(cur, ev, now)
		effect = e
		return next, err == nil && e != outcome.EffectNone, err
	}
	var o outcome.Outcome
	if holdsAnyText(tx) {
		o, err = s.updateTx(ctx, tx, sub.ID, decide)
		if cannotHold(err) != "" {
			// Not expected of such a database, and tx is aborted: the
			// caller cannot commit anything of it.
			return outcome.Outcome{}, outcome.EffectNone, err
		}
	} else {
		o, err = s.updateInSavepoint(ctx, tx, sub.ID, decide)
	}
	if errors.Is(err, outcome.ErrInvalidEvent) {
		outcome.LogUntrackable(ctx, s.logger, ev, err)
		return outcome.Outcome{}, outcome.EffectUntrackable, nil
	}
	if err != nil {
		return outcome.Outcome{}, outcome.EffectNone, err
	}
	if effect == outcome.EffectConflict {
		outcome.LogConflict(ctx, s.logger, o.Conflict, ev.ID)
	}
	return o, effect, nil
}

var (
	_ outcome.Store      = (*OutcomeStore)(nil)
	_ outcome.Subscriber = (*OutcomeStore)(nil)
)

// notifyAfterCommit makes an OutcomeStore's writes notify nobody: a
// Queue's Worker calls sendNotify after its commits, since PostgreSQL
// flushes notifying commits one at a time (BENCHMARKS.md). Subscribe
// listens as every OutcomeStore's does.
func notifyAfterCommit() Option { return func(o *options) { o.afterCommit = true } }

// sendNotify wakes the store's waiters after a commit (the caller's): it
// sends a NOTIFY of the store's channel, bounded by the store's timeout; a
// failure is logged, and only delays the waiters to their next read
// (outcome.WithPollInterval). At most one NOTIFY is in flight per store:
// a caller first waits for the one in flight, which may have started
// before its commit, then sends one unless another caller started one
// after that commit meanwhile. Every commit is followed by a NOTIFY
// started after it, and no caller sends more than one, however many
// workers commit (TestQueueNotifiesAfterEveryCommit).
func (s *OutcomeStore) sendNotify() {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	s.commits++
	mine := s.commits
	for s.inFlight != nil {
		if s.covered >= mine {
			return // a NOTIFY started after this commit
		}
		wait := s.inFlight
		s.notifyMu.Unlock()
		<-wait
		s.notifyMu.Lock()
	}
	if s.covered >= mine {
		return
	}
	done := make(chan struct{})
	s.inFlight, s.covered = done, s.commits
	s.notifyMu.Unlock()
	s.notifyNow()
	s.notifyMu.Lock()
	s.inFlight = nil
	close(done)
}

func (s *OutcomeStore) notifyNow() {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	_, err := s.pool.Exec(ctx, s.q.notifyNow)
	cancel()
	if err != nil && s.logger != nil {
		s.logger.LogAttrs(context.Background(), slog.LevelWarn,
			"pgstore: notifying the outcome tracker's waiters failed; they read the table at their next poll",
			slog.String("error", err.Error()))
	}
}
