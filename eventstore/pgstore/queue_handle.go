package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// handle is the pgx.Tx a TxEventFunc gets: the savepoint's, until the
// function returns. Each call passes a gate that refuses it with
// pgx.ErrTxClosed once closed; close waits for the calls still in flight
// (their rows and batches too), whose attempt then fails, so that nothing
// of the function's touches the connection after it returned and nothing
// it started as it returned commits
// (TestQueueTxIsRefusedTheMomentTheFunctionReturns).
type handle struct {
	sp  *gate
	tx  pgx.Tx
	top bool // the function's savepoint, not one it began inside it
}

type gate struct {
	use      sync.Mutex // held by the one call on the connection (pgx allows one)
	mu       sync.Mutex
	closed   bool
	inflight int
	drained  chan struct{} // closed when the last call in flight at close ends
	released bool          // the function committed or rolled back its savepoint
	relErr   error         // and how that went
	failed   string
}

func newHandle(sp pgx.Tx) *handle { return &handle{sp: &gate{}, tx: sp, top: true} }

// enter passes the gate, or says the transaction is closed.
func (g *gate) enter() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return pgx.ErrTxClosed
	}
	if !g.use.TryLock() {
		return errBusy
	}
	g.inflight++
	return nil
}

// leave ends a call, noting the first statement that failed in the database.
func (g *gate) leave(sql string, err error) {
	var pgErr *pgconn.PgError
	g.mu.Lock()
	defer g.mu.Unlock()
	if errors.As(err, &pgErr) && g.failed == "" {
		if len(sql) > 80 {
			sql = sql[:80] + "..."
		}
		g.failed = fmt.Sprintf("its statement %q (SQLSTATE %s: %s)", sql, pgErr.Code, pgErr.Message)
	}
	g.use.Unlock()
	if g.inflight--; g.inflight == 0 && g.drained != nil {
		close(g.drained)
	}
}

// errBusy is pgx's "conn busy", without the data race of two goroutines
// on one connection.
var errBusy = errors.New("pgstore: the tx is busy with another call of yours (rows not closed yet, or another goroutine's): pgx runs one at a time")

// errStillRunning fails an attempt whose function returned while a call
// on its tx (a goroutine's) was still running.
var errStillRunning = errors.New("a statement on its tx was still running when it returned (a goroutine of yours?); " +
	"nothing of this attempt commits: wait for your goroutines before you return")

// close refuses every later call; if some are in flight, it waits for
// them (until ctx ends) and fails.
func (h *handle) close(ctx context.Context) error {
	g := h.sp
	g.mu.Lock()
	g.closed = true
	if g.inflight == 0 {
		g.mu.Unlock()
		return nil
	}
	g.drained = make(chan struct{})
	g.mu.Unlock()
	select {
	case <-g.drained:
		return errStillRunning
	case <-ctx.Done():
		return fmt.Errorf("%w; and it did not end before the job's context did: %w", errStillRunning, ctx.Err())
	}
}

// release releases the savepoint unless the function ended it itself.
func (h *handle) release(ctx context.Context) error {
	if h.sp.released {
		return h.sp.relErr
	}
	return h.tx.Commit(ctx)
}

func (h *handle) failedStatement() string {
	if h.sp.failed == "" {
		return "one of its statements"
	}
	return h.sp.failed
}

func (h *handle) Begin(ctx context.Context) (pgx.Tx, error) {
	if err := h.sp.enter(); err != nil {
		return nil, err
	}
	defer h.sp.leave("SAVEPOINT", nil)
	tx, err := h.tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &handle{sp: h.sp, tx: tx}, nil
}

func (h *handle) end(ctx context.Context, end func(context.Context) error) error {
	if err := h.sp.enter(); err != nil {
		return err
	}
	err := end(ctx)
	if h.top {
		h.sp.mu.Lock()
		h.sp.released, h.sp.relErr = true, err
		h.sp.mu.Unlock()
	}
	h.sp.leave("", err)
	return err
}

// Commit releases the savepoint; Rollback rolls back to it.
func (h *handle) Commit(ctx context.Context) error   { return h.end(ctx, h.tx.Commit) }
func (h *handle) Rollback(ctx context.Context) error { return h.end(ctx, h.tx.Rollback) }

func (h *handle) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	if err := h.sp.enter(); err != nil {
		return 0, err
	}
	n, err := h.tx.CopyFrom(ctx, table, cols, src)
	h.sp.leave("COPY "+table.Sanitize(), err)
	return n, err
}

func (h *handle) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := h.sp.enter(); err != nil {
		return closedBatch{}
	}
	return &gatedBatch{BatchResults: h.tx.SendBatch(ctx, b), g: h.sp}
}

// LargeObjects is the savepoint's, ungated: use it before you return.
func (h *handle) LargeObjects() pgx.LargeObjects { return h.tx.LargeObjects() }

func (h *handle) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if err := h.sp.enter(); err != nil {
		return nil, err
	}
	d, err := h.tx.Prepare(ctx, name, sql)
	h.sp.leave(sql, err)
	return d, err
}

func (h *handle) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := h.sp.enter(); err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := h.tx.Exec(ctx, sql, args...)
	h.sp.leave(sql, err)
	return tag, err
}

func (h *handle) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := h.sp.enter(); err != nil {
		return nil, err
	}
	rows, err := h.tx.Query(ctx, sql, args...)
	if err != nil {
		h.sp.leave(sql, err)
		return nil, err
	}
	return &gatedRows{Rows: rows, g: h.sp, sql: sql}, nil
}

func (h *handle) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := h.Query(ctx, sql, args...)
	if err != nil {
		return errRow{err}
	}
	return gatedRow{rows}
}

// Conn is the savepoint's connection while the function runs, nil after.
func (h *handle) Conn() *pgx.Conn {
	if err := h.sp.enter(); err != nil {
		return nil
	}
	defer h.sp.leave("", nil)
	return h.tx.Conn()
}

// gatedRows leaves the gate once, when the rows are closed or read to the end.
type gatedRows struct {
	pgx.Rows
	g    *gate
	sql  string
	once sync.Once
}

func (r *gatedRows) done() { r.once.Do(func() { r.g.leave(r.sql, r.Rows.Err()) }) }

func (r *gatedRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.done()
	return false
}

func (r *gatedRows) Close() { r.Rows.Close(); r.done() }

type gatedRow struct{ rows pgx.Rows }

func (r gatedRow) Scan(dest ...any) error {
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

type gatedBatch struct {
	pgx.BatchResults
	g    *gate
	once sync.Once
}

func (b *gatedBatch) Close() error {
	err := b.BatchResults.Close()
	b.once.Do(func() { b.g.leave("a batch", err) })
	return err
}

type closedBatch struct{}

func (closedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, pgx.ErrTxClosed }
func (closedBatch) Query() (pgx.Rows, error)         { return nil, pgx.ErrTxClosed }
func (closedBatch) QueryRow() pgx.Row                { return errRow{pgx.ErrTxClosed} }
func (closedBatch) Close() error                     { return pgx.ErrTxClosed }
