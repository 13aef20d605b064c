package pgstore

// One event's way through the Queue (doc.go, "The Queue"): Enqueue, then
// Work with your function on a gated pgx.Tx.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
)

// EventArgs is the River job of one event: its id alone (the body waits in
// the Queue's table), so that River UI shows no personal data. A job with
// Purge set forgets the ids past QueueConfig.Retention.
type EventArgs struct {
	ID    string `json:"id,omitempty"`
	Purge bool   `json:"purge,omitempty"`
}

// Kind is the River job kind of events.
func (EventArgs) Kind() string { return "payments_webhook_event" }

// Enqueue records ev unless its id was enqueued within the retention: in
// one transaction, its id and body into the Queue's table and its River
// job (InsertTx). A duplicate writes nothing. Its errors wrap
// webhook.ErrUnavailable: the handler answers 503 and the service
// delivers the event again.
func (q *Queue) Enqueue(ctx context.Context, ev *payments.Event) error {
	_, err := q.enqueue(ctx, ev)
	return err
}

// enqueue reports whether it inserted the event. Its deadline covers the
// wait for a connection too.
func (q *Queue) enqueue(ctx context.Context, ev *payments.Event) (inserted bool, err error) {
	if ev == nil || ev.ID == "" || len(ev.RawJSON()) == 0 {
		return false, fmt.Errorf("pgstore: enqueue: the event has no id or no body: pass an event from webhook.Handler, payments.ParseEvent or ListEvents")
	}
	defer func() {
		if err != nil {
			inserted, err = false, fmt.Errorf("%w: pgstore: enqueue event %s: %w (answered 503: the service delivers it again, and reconcile lists it; check that the database is reachable and that the pool has a connection free beyond the workers')",
				webhook.ErrUnavailable, shownID(ev.ID), err)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, q.w.cfg.Timeout)
	defer cancel()
	tx, err := q.w.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback(ctx) }() // a no-op after the commit
	id := storedID(ev.ID)
	err = tx.QueryRow(ctx, `INSERT INTO `+q.w.table+` (event_id, body) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING RETURNING true`, id, ev.RawJSON()).Scan(new(bool))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // a duplicate: the transaction wrote nothing
	} else if err != nil {
		return false, err
	}
	if _, err := q.client.InsertTx(ctx, tx, EventArgs{ID: id}, &river.InsertOpts{Queue: QueueName, MaxAttempts: q.w.cfg.MaxAttempts}); err != nil {
		return false, fmt.Errorf("insert its River job: %w", err)
	}
	return true, tx.Commit(ctx)
}

// Timeout is QueueConfig.JobTimeout, whatever your client's JobTimeout.
func (w *Worker) Timeout(*river.Job[EventArgs]) time.Duration { return w.cfg.JobTimeout }

// Work runs your function for one event in a transaction that also records
// its outcome, completes the job, clears the event's body and commits.
func (w *Worker) Work(ctx context.Context, job *river.Job[EventArgs]) error {
	if job.Args.Purge {
		client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
		if err == nil {
			_, err = w.purge(ctx, client)
		}
		return err
	}
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: job %d: begin the job's transaction: %w", job.ID, err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.Timeout)
		defer cancel()
		_ = tx.Rollback(ctx)
	}()
	// One round trip: the body, its row locked (two jobs of one event run
	// one after the other: no body, no run), and the function's SAVEPOINT.
	var body []byte
	b := &pgx.Batch{}
	b.Queue(`SELECT body FROM `+w.table+` WHERE event_id = $1 FOR NO KEY UPDATE`, job.Args.ID).QueryRow(func(r pgx.Row) error { return r.Scan(&body) })
	b.Queue(`SAVEPOINT ` + fnSavepoint)
	if err = tx.SendBatch(ctx, b).Close(); errors.Is(err, pgx.ErrNoRows) || err == nil && body == nil {
		return river.JobCancel(fmt.Errorf("pgstore: job %d: the event %s has no body in %s: its function already committed, or its row was deleted; nothing runs (to process it again, run your function on it yourself)",
			job.ID, shownID(job.Args.ID), w.cfg.Table))
	} else if err != nil {
		return fmt.Errorf("pgstore: job %d: read the event from %s: %w", job.ID, w.cfg.Table, err)
	}
	ev, err := payments.ParseEvent(body)
	if err != nil {
		return river.JobCancel(fmt.Errorf("pgstore: job %d holds no event: %w", job.ID, err))
	}
	if err := w.call(ctx, tx, ev); err != nil {
		return fmt.Errorf("pgstore: event %s: %w", shownID(ev.ID), err)
	}
	o, effect, err := w.outcomes.ApplyTx(ctx, tx, ev)
	if err != nil {
		return failed(ev, "record its outcome", err)
	}
	// The fence: River completes the job only while it runs; unless its row
	// shows this very attempt completed, nothing of the attempt commits.
	done, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
	if err != nil {
		return failed(ev, "complete the job", err)
	}
	if done.State != rivertype.JobStateCompleted || done.Attempt != job.Attempt {
		return fmt.Errorf("event %s, job %d attempt %d (now %s, attempt %d): %w", shownID(ev.ID), job.ID, job.Attempt, done.State, done.Attempt, ErrJobRescued)
	}
	// Last: a duplicate's INSERT waits for the commit of a row's UPDATE.
	if _, err := tx.Exec(ctx, `UPDATE `+w.table+` SET body = NULL WHERE event_id = $1`, job.Args.ID); err != nil {
		return failed(ev, "clear its body", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return failed(ev, "commit", err)
	}
	if effect != outcome.EffectNone && o.State.Final() {
		w.outcomes.sendNotify() // after the commit, never before it
	}
	return nil
}

func failed(ev *payments.Event, step string, err error) error {
	return fmt.Errorf("pgstore: event %s: %s: %w (nothing of this run is recorded; River runs it again)", shownID(ev.ID), step, err)
}

// call runs your function on a gated handle, closed as it returns.
func (w *Worker) call(ctx context.Context, tx pgx.Tx, ev *payments.Event) error {
	g := &gate{}
	err := w.fn(ctx, &handle{Tx: savepoint{tx}, g: g, top: true}, ev)
	if err := g.close(ctx); err != nil {
		return fmt.Errorf("your function returned, but %w", err)
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("your function ran past QueueConfig.JobTimeout (%v): %w; nothing of it was committed and River runs it again with back-off: make the function faster or raise JobTimeout", w.cfg.JobTimeout, cmp.Or(err, ctx.Err()))
	case ctx.Err() != nil:
		return fmt.Errorf("your function was cancelled (its process stopped the River client, or the job was cancelled): %w; nothing of it was committed and River runs it again", cmp.Or(err, ctx.Err()))
	case err != nil:
		return fmt.Errorf("your function failed: %w; nothing of it was committed and River runs it again with back-off, up to QueueConfig.MaxAttempts before it discards the job (River UI or the river CLI shows its errors and retries it)", err)
	case g.endErr != nil: // the function's own Commit or Rollback of its tx
	case tx.Conn().PgConn().TxStatus() == 'E': // a statement of it failed, unhandled
		g.endErr = errors.New("SQLSTATE 25P02 for every later statement")
	default:
		return nil
	}
	return fmt.Errorf("your function returned nil, but %s failed and left the transaction aborted (%w); nothing was committed and River runs it again: after a statement fails, return its error, or roll back to a savepoint of your own (tx.Begin, then its Rollback) and carry on",
		cmp.Or(g.failed, "one of its statements"), g.endErr)
}

// savepoint is your function's tx: Commit and Rollback end fnSavepoint.
type savepoint struct{ pgx.Tx }

const fnSavepoint = "pgstore_function"

func (s savepoint) Commit(ctx context.Context) error   { return s.end(ctx, "RELEASE") }
func (s savepoint) Rollback(ctx context.Context) error { return s.end(ctx, "ROLLBACK TO") }
func (s savepoint) end(ctx context.Context, verb string) error {
	_, err := s.Exec(ctx, verb+" SAVEPOINT "+fnSavepoint)
	return err
}

// handle is the pgx.Tx your function gets. Each call passes its gate: one
// at a time (errBusy, not pgx's data race), none once the function
// returned (pgx.ErrTxClosed); a call still in flight then fails the attempt.
type handle struct {
	pgx.Tx // LargeObjects is the savepoint's, ungated
	g      *gate
	top    bool // the function's savepoint, not one it began
}

type gate struct {
	mu            sync.Mutex
	call          chan struct{} // the call in flight, closed as it ends
	closed, ended bool          // ended: the function ended its tx itself (refused since)
	endErr        error
	failed        string // the first statement the database refused
}

var (
	errBusy         = errors.New("pgstore: the tx is busy with another call of yours (rows not closed yet, or another goroutine's): pgx runs one at a time")
	errStillRunning = errors.New("a call on its tx was still running when it returned (a goroutine of yours?); nothing of this attempt commits: wait for your goroutines before you return")
)

func (g *gate) enter(top bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || top && g.ended {
		return pgx.ErrTxClosed
	} else if g.call != nil {
		return errBusy
	}
	g.call = make(chan struct{})
	return nil
}

func (g *gate) leave(sql string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var pgErr *pgconn.PgError
	if g.failed == "" && errors.As(err, &pgErr) {
		g.failed = fmt.Sprintf("its statement %.80q (SQLSTATE %s: %s)", sql, pgErr.Code, pgErr.Message)
	}
	close(g.call)
	g.call = nil
}

// close refuses every later call; a call in flight fails the attempt.
func (g *gate) close(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	call := g.call
	g.mu.Unlock()
	if call == nil {
		return nil
	}
	select {
	case <-call:
		return errStillRunning
	case <-ctx.Done():
		return fmt.Errorf("%w (and it had not ended when the job's context did: %w)", errStillRunning, ctx.Err())
	}
}

// gated runs call as the one call of g in flight.
func gated[T any](h *handle, sql string, call func() (T, error)) (T, error) {
	if err := h.g.enter(h.top); err != nil {
		return *new(T), err
	}
	v, err := call()
	h.g.leave(sql, err)
	return v, err
}

func (h *handle) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return gated(h, sql, func() (pgconn.CommandTag, error) { return h.Tx.Exec(ctx, sql, args...) })
}

func (h *handle) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return gated(h, sql, func() (*pgconn.StatementDescription, error) { return h.Tx.Prepare(ctx, name, sql) })
}

func (h *handle) CopyFrom(ctx context.Context, t pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	return gated(h, "COPY "+t.Sanitize(), func() (int64, error) { return h.Tx.CopyFrom(ctx, t, cols, src) })
}

// Conn is the savepoint's connection while the function runs, nil after.
func (h *handle) Conn() *pgx.Conn {
	c, _ := gated(h, "", func() (*pgx.Conn, error) { return h.Tx.Conn(), nil })
	return c
}

func (h *handle) Begin(ctx context.Context) (pgx.Tx, error) {
	return gated(h, "SAVEPOINT", func() (pgx.Tx, error) {
		tx, err := h.Tx.Begin(ctx)
		if err != nil {
			return nil, err
		}
		return &handle{Tx: tx, g: h.g}, nil
	})
}

func (h *handle) Commit(ctx context.Context) error   { return h.end(ctx, "RELEASE", h.Tx.Commit) }
func (h *handle) Rollback(ctx context.Context) error { return h.end(ctx, "ROLLBACK TO", h.Tx.Rollback) }

func (h *handle) end(ctx context.Context, sql string, end func(context.Context) error) error {
	_, err := gated(h, sql, func() (struct{}, error) {
		err := end(ctx)
		if h.top {
			h.g.mu.Lock()
			h.g.ended, h.g.endErr = true, err
			h.g.mu.Unlock()
		}
		return struct{}{}, err
	})
	return err
}

// Query's rows leave the gate once closed or read to the end.
func (h *handle) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := h.g.enter(h.top); err != nil {
		return nil, err
	}
	rows, err := h.Tx.Query(ctx, sql, args...)
	if err != nil {
		h.g.leave(sql, err)
		return nil, err
	}
	return &gatedRows{Rows: rows, leave: func() { h.g.leave(sql, rows.Err()) }}, nil
}

func (h *handle) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := h.Query(ctx, sql, args...)
	return refused(func(dest ...any) error {
		if err != nil {
			return err
		}
		_, err := pgx.CollectOneRow(rows, func(r pgx.CollectableRow) (struct{}, error) { return struct{}{}, r.Scan(dest...) })
		return err
	})
}

// SendBatch's results leave the gate when closed.
func (h *handle) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := h.g.enter(h.top); err != nil {
		return refused(func(...any) error { return err })
	}
	br := h.Tx.SendBatch(ctx, b)
	return &gatedBatch{BatchResults: br, leave: func(err error) { h.g.leave("a batch", err) }}
}

type gatedRows struct {
	pgx.Rows
	leave func()
	once  sync.Once
}

func (r *gatedRows) Next() bool { return r.Rows.Next() || r.done() }
func (r *gatedRows) Close()     { r.Rows.Close(); r.done() }
func (r *gatedRows) done() bool { r.once.Do(r.leave); return false }

type gatedBatch struct {
	pgx.BatchResults
	leave func(error)
	once  sync.Once
}

func (b *gatedBatch) Close() error {
	err := b.BatchResults.Close()
	b.once.Do(func() { b.leave(err) })
	return err
}

// refused is QueryRow's row, and a refused batch: every call returns r().
type refused func(dest ...any) error

func (r refused) Scan(dest ...any) error           { return r(dest...) }
func (r refused) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, r() }
func (r refused) Query() (pgx.Rows, error)         { return nil, r() }
func (r refused) QueryRow() pgx.Row                { return r }
func (r refused) Close() error                     { return r() }

// storedID is the key an event id is stored under (doc.go, "Event ids"):
// itself, or "sha256:" and the hex SHA-256 of an id PostgreSQL cannot key.
func storedID(id string) string {
	if len(id) <= 256 && utf8.ValidString(id) && !strings.ContainsRune(id, 0) && !strings.HasPrefix(id, "sha256:") {
		return id
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(id)))
}

// shownID is id as an error message quotes it: at most 64 bytes of it.
func shownID(id string) string {
	if len(id) <= 64 {
		return fmt.Sprintf("%q", id)
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", id[:cut], len(id))
}
