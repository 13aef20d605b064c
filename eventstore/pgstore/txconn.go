package pgstore

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// errStoreOwnsTx is what a function made by Transactional gets when it
// commits or rolls back the transaction the store opened for it.
var errStoreOwnsTx = errors.New("pgstore: the store commits or rolls back the transaction of a Transactional function: return nil to commit, an error to roll back")

// connTx is the pgx.Tx ClaimAndRun gives a function: the transaction the
// store began on conn in the same round trip as the claim (pgx.Conn.Begin
// would cost one of its own). Statements go to conn; Begin makes a
// savepoint, as pgx's own transactions do; Commit and Rollback of the
// store's transaction itself are refused (errStoreOwnsTx), those of a
// savepoint release it or roll back to it.
type connTx struct {
	ctx       context.Context // the function's: LargeObjects' bound
	idle      *idleClock      // when the transaction last had a statement in flight
	conn      *pgx.Conn
	savepoint int  // 0: the store's transaction; n: savepoint sp_n
	last      *int // the last savepoint number used on conn
	closed    bool // a savepoint released or rolled back
}

var _ pgx.Tx = (*connTx)(nil)

// Begin makes a savepoint: a pseudo nested transaction, as pgx.Tx's.
func (t *connTx) Begin(ctx context.Context) (pgx.Tx, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	n := *t.last + 1
	defer t.idle.busy()()
	if _, err := t.conn.Exec(ctx, "savepoint sp_"+strconv.Itoa(n)); err != nil {
		return nil, err
	}
	*t.last = n
	return &connTx{ctx: t.ctx, idle: t.idle, conn: t.conn, savepoint: n, last: t.last}, nil
}

// Commit releases a savepoint; the store's transaction is committed by the
// store.
func (t *connTx) Commit(ctx context.Context) error {
	return t.end(ctx, "release savepoint sp_")
}

// Rollback rolls back to a savepoint; the store's transaction is rolled
// back by the store, when the function returns an error.
func (t *connTx) Rollback(ctx context.Context) error {
	return t.end(ctx, "rollback to savepoint sp_")
}

func (t *connTx) end(ctx context.Context, sql string) error {
	switch {
	case t.savepoint == 0:
		return errStoreOwnsTx
	case t.closed:
		return pgx.ErrTxClosed
	}
	t.closed = true
	defer t.idle.busy()()
	_, err := t.conn.Exec(ctx, sql+strconv.Itoa(t.savepoint))
	return err
}

// CopyFrom runs COPY FROM in the transaction.
func (t *connTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if t.closed {
		return 0, pgx.ErrTxClosed
	}
	defer t.idle.busy()()
	return t.conn.CopyFrom(ctx, table, columns, src)
}

// SendBatch sends b in the transaction.
func (t *connTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.closed {
		return closedBatch{}
	}
	done := t.idle.busy()
	return &busyBatch{BatchResults: t.conn.SendBatch(ctx, b), done: done}
}

// LargeObjects returns the large objects of the transaction. pgx builds them
// on a transaction of its own type only: each call makes one on the
// connection with an empty statement, which changes nothing, under the
// function's context (cancelled when the database stops answering). On a
// broken connection it returns the zero LargeObjects, whose methods panic
// (the handler answers 500 and rolls back).
func (t *connTx) LargeObjects() pgx.LargeObjects {
	defer t.idle.busy()()
	tx, err := t.conn.BeginTx(t.ctx, pgx.TxOptions{BeginQuery: "-- pgstore: large objects"})
	if err != nil {
		return pgx.LargeObjects{}
	}
	return tx.LargeObjects()
}

// Prepare prepares a statement on the transaction's connection.
func (t *connTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	defer t.idle.busy()()
	return t.conn.Prepare(ctx, name, sql)
}

// Exec runs sql in the transaction.
func (t *connTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.closed {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	defer t.idle.busy()()
	return t.conn.Exec(ctx, sql, args...)
}

// Query runs sql in the transaction.
func (t *connTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	done := t.idle.busy()
	rows, err := t.conn.Query(ctx, sql, args...)
	if err != nil {
		done()
		return rows, err
	}
	return &busyRows{Rows: rows, done: done}, nil
}

// QueryRow runs sql in the transaction.
func (t *connTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.closed {
		return closedRow{}
	}
	done := t.idle.busy()
	return busyRow{row: t.conn.QueryRow(ctx, sql, args...), done: done}
}

// Conn is the connection the transaction runs on.
func (t *connTx) Conn() *pgx.Conn { return t.conn }

// closedRow and closedBatch answer a released or rolled back savepoint.
type closedRow struct{}

func (closedRow) Scan(...any) error { return pgx.ErrTxClosed }

type closedBatch struct{}

func (closedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, pgx.ErrTxClosed }
func (closedBatch) Query() (pgx.Rows, error)         { return nil, pgx.ErrTxClosed }
func (closedBatch) QueryRow() pgx.Row                { return closedRow{} }
func (closedBatch) Close() error                     { return pgx.ErrTxClosed }

// idleClock tells how long a transaction has had no statement in flight:
// the server ends a transaction idle for the lease
// (idle_in_transaction_session_timeout), so the store cancels the
// function's context a margin before (Store.watch). A nil idleClock counts
// nothing.
type idleClock struct {
	mu    sync.Mutex
	calls int       // statements in flight
	since time.Time // when the last one ended (or the clock started)
}

func newIdleClock() *idleClock { return &idleClock{since: time.Now()} }

// busy marks a statement in flight; the function it returns marks its end
// (once).
func (c *idleClock) busy() func() {
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			c.calls--
			c.since = time.Now()
			c.mu.Unlock()
		})
	}
}

// idleSince is when the transaction went idle, and false while a
// statement is in flight.
func (c *idleClock) idleSince() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.since, c.calls == 0
}

// busyRows, busyRow and busyBatch end their statement's time in flight
// when the function has read them.
type busyRows struct {
	pgx.Rows
	done func()
}

func (r *busyRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.done()
	return false
}

func (r *busyRows) Close() {
	r.Rows.Close()
	r.done()
}

type busyRow struct {
	row  pgx.Row
	done func()
}

func (r busyRow) Scan(dest ...any) error {
	defer r.done()
	return r.row.Scan(dest...)
}

type busyBatch struct {
	pgx.BatchResults
	done func()
}

func (b *busyBatch) Close() error {
	defer b.done()
	return b.BatchResults.Close()
}
