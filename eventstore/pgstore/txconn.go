package pgstore

import (
	"context"
	"errors"
	"strconv"

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
	if _, err := t.conn.Exec(ctx, "savepoint sp_"+strconv.Itoa(n)); err != nil {
		return nil, err
	}
	*t.last = n
	return &connTx{conn: t.conn, savepoint: n, last: t.last}, nil
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
	_, err := t.conn.Exec(ctx, sql+strconv.Itoa(t.savepoint))
	return err
}

// CopyFrom runs COPY FROM in the transaction.
func (t *connTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if t.closed {
		return 0, pgx.ErrTxClosed
	}
	return t.conn.CopyFrom(ctx, table, columns, src)
}

// SendBatch sends b in the transaction.
func (t *connTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.closed {
		return closedBatch{}
	}
	return t.conn.SendBatch(ctx, b)
}

// LargeObjects returns the large objects of the transaction. pgx builds them
// on a transaction of its own type only: each call makes one on the
// connection with an empty statement, which changes nothing. On a broken
// connection it returns the zero LargeObjects, whose methods panic (the
// handler answers 500 and rolls back).
func (t *connTx) LargeObjects() pgx.LargeObjects {
	tx, err := t.conn.BeginTx(context.Background(), pgx.TxOptions{BeginQuery: "-- pgstore: large objects"})
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
	return t.conn.Prepare(ctx, name, sql)
}

// Exec runs sql in the transaction.
func (t *connTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.closed {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	return t.conn.Exec(ctx, sql, args...)
}

// Query runs sql in the transaction.
func (t *connTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	return t.conn.Query(ctx, sql, args...)
}

// QueryRow runs sql in the transaction.
func (t *connTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.closed {
		return closedRow{}
	}
	return t.conn.QueryRow(ctx, sql, args...)
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
