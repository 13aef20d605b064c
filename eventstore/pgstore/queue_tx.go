package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// handle is the pgx.Tx a TxEventFunc gets, on its savepoint. Every call
// passes a gate: one call at a time (pgx's "conn busy" as an error, not a
// data race), none once the function returned (pgx.ErrTxClosed). A call
// still running then (its rows or batch too) is waited for and fails the
// attempt, so nothing of the function touches the connection after it
// returned (TestQueueTxIsRefusedTheMomentTheFunctionReturns).
type handle struct {
	tx  pgx.Tx
	g   *gate
	top bool // the function's savepoint, not one it began in it
}

type gate struct {
	use           sync.Mutex // held by the call in flight
	mu            sync.Mutex
	closed, ended bool // ended: the function committed or rolled back its savepoint
	inflight      int
	drained       chan struct{}
	endErr        error
	failed        string // the first statement the database refused
}

var (
	errBusy         = errors.New("pgstore: the tx is busy with another call of yours (rows not closed yet, or another goroutine's): pgx runs one at a time")
	errStillRunning = errors.New("a call on its tx was still running when it returned (a goroutine of yours?); nothing of this attempt commits: wait for your goroutines before you return")
)

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

func (g *gate) leave(sql string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && g.failed == "" {
		g.failed = fmt.Sprintf("its statement %.80q (SQLSTATE %s: %s)", sql, pgErr.Code, pgErr.Message)
	}
	g.use.Unlock()
	if g.inflight--; g.inflight == 0 && g.drained != nil {
		close(g.drained)
	}
}

// close refuses every later call; with calls in flight it waits for them
// (until ctx ends) and fails.
func (h *handle) close(ctx context.Context) error {
	h.g.mu.Lock()
	h.g.closed = true
	if h.g.inflight == 0 {
		h.g.mu.Unlock()
		return nil
	}
	h.g.drained = make(chan struct{})
	h.g.mu.Unlock()
	select {
	case <-h.g.drained:
		return errStillRunning
	case <-ctx.Done():
		return fmt.Errorf("%w (and it had not ended when the job's context did: %w)", errStillRunning, ctx.Err())
	}
}

// release releases the savepoint, unless the function ended it itself.
func (h *handle) release(ctx context.Context) error {
	if h.g.ended {
		return h.g.endErr
	}
	return h.tx.Commit(ctx)
}

func (h *handle) failedStatement() string { return cmp.Or(h.g.failed, "one of its statements") }

func (h *handle) Begin(ctx context.Context) (pgx.Tx, error) {
	if err := h.g.enter(); err != nil {
		return nil, err
	}
	tx, err := h.tx.Begin(ctx)
	h.g.leave("SAVEPOINT", err)
	if err != nil {
		return nil, err
	}
	return &handle{tx: tx, g: h.g}, nil
}

// Commit releases the savepoint, Rollback rolls back to it.
func (h *handle) Commit(ctx context.Context) error   { return h.end(ctx, "RELEASE", h.tx.Commit) }
func (h *handle) Rollback(ctx context.Context) error { return h.end(ctx, "ROLLBACK TO", h.tx.Rollback) }

func (h *handle) end(ctx context.Context, sql string, end func(context.Context) error) error {
	if err := h.g.enter(); err != nil {
		return err
	}
	err := end(ctx)
	if h.top {
		h.g.ended, h.g.endErr = true, err
	}
	h.g.leave(sql, err)
	return err
}

func (h *handle) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := h.g.enter(); err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := h.tx.Exec(ctx, sql, args...)
	h.g.leave(sql, err)
	return tag, err
}

func (h *handle) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := h.g.enter(); err != nil {
		return nil, err
	}
	rows, err := h.tx.Query(ctx, sql, args...)
	if err != nil {
		h.g.leave(sql, err)
		return nil, err
	}
	return &gatedRows{Rows: rows, leave: func() { h.g.leave(sql, rows.Err()) }}, nil
}

func (h *handle) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := h.Query(ctx, sql, args...)
	return scanner(func(dest ...any) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			return cmp.Or(rows.Err(), pgx.ErrNoRows)
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	})
}

func (h *handle) CopyFrom(ctx context.Context, t pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	if err := h.g.enter(); err != nil {
		return 0, err
	}
	n, err := h.tx.CopyFrom(ctx, t, cols, src)
	h.g.leave("COPY "+t.Sanitize(), err)
	return n, err
}

func (h *handle) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := h.g.enter(); err != nil {
		return &gatedBatch{err: err}
	}
	br := h.tx.SendBatch(ctx, b)
	return &gatedBatch{BatchResults: br, leave: func(err error) { h.g.leave("a batch", err) }}
}

func (h *handle) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if err := h.g.enter(); err != nil {
		return nil, err
	}
	d, err := h.tx.Prepare(ctx, name, sql)
	h.g.leave(sql, err)
	return d, err
}

// LargeObjects is the savepoint's, ungated: use it before you return.
func (h *handle) LargeObjects() pgx.LargeObjects { return h.tx.LargeObjects() }

// Conn is the savepoint's connection while the function runs, nil after.
func (h *handle) Conn() *pgx.Conn {
	if h.g.enter() != nil {
		return nil
	}
	defer h.g.leave("", nil)
	return h.tx.Conn()
}

type scanner func(dest ...any) error

func (f scanner) Scan(dest ...any) error { return f(dest...) }

// gatedRows leaves the gate once: when closed or read to the end.
type gatedRows struct {
	pgx.Rows
	leave func()
	once  sync.Once
}

func (r *gatedRows) Next() bool {
	next := r.Rows.Next()
	if !next {
		r.once.Do(r.leave)
	}
	return next
}

func (r *gatedRows) Close() { r.Rows.Close(); r.once.Do(r.leave) }

type gatedBatch struct {
	pgx.BatchResults
	err   error // refused at the gate
	leave func(error)
	once  sync.Once
}

func (b *gatedBatch) Exec() (pgconn.CommandTag, error) {
	if b.err != nil {
		return pgconn.CommandTag{}, b.err
	}
	return b.BatchResults.Exec()
}

func (b *gatedBatch) Query() (pgx.Rows, error) {
	if b.err != nil {
		return nil, b.err
	}
	return b.BatchResults.Query()
}

func (b *gatedBatch) QueryRow() pgx.Row {
	if b.err != nil {
		return scanner(func(...any) error { return b.err })
	}
	return b.BatchResults.QueryRow()
}

func (b *gatedBatch) Close() error {
	if b.err != nil {
		return b.err
	}
	err := b.BatchResults.Close()
	b.once.Do(func() { b.leave(err) })
	return err
}
