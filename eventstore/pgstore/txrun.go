package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paymentsapi/payments-go/eventstore/internal/lease"
	"github.com/paymentsapi/payments-go/webhook"
)

var _ webhook.TxStore = (*Store)(nil)

// txKey carries ClaimAndRun's transaction to the function Transactional
// made.
type txKey struct{}

type txValue struct {
	s  *Store
	tx pgx.Tx
}

var (
	// errDatabaseSilent is why ClaimAndRun cancels a function's context.
	errDatabaseSilent = errors.New("pgstore: the database stopped answering while the function ran")
	errConnectionLost = errors.New("the connection to the database broke while the function ran")
)

// ClaimAndRun implements webhook.TxStore once Transactional was called on
// the store (before that it leaves every delivery to the usual path): the
// handler's deliveries are then claimed inside the transaction that runs
// the function and records the event done, in one commit.
//
// A delivery first reads the event's row, without a write: a done event is
// answered as a duplicate; one claimed by a delivery of the usual path
// (Reconcile, say) is left to the usual path, which waits for that claim to
// settle (the handler's WithClaimWait). Otherwise it begins a transaction and
// inserts the row as done (or takes over a lapsed or expired row), which
// locks it: the row lock is the claim's lease until the commit. A
// concurrent delivery of the same event waits for the lock at most wait
// (lock_timeout; the handler's WithClaimWait, at least 1 ms), then answers
// in progress (409), or duplicate once the first committed. See the package
// documentation for what bounds the lock of a holder that died.
func (s *Store) ClaimAndRun(ctx context.Context, eventID string, wait time.Duration, run func(context.Context, webhook.Claim) error) (webhook.ClaimStatus, error) {
	if !s.transactional.Load() {
		return 0, nil
	}
	if eventID == "" {
		return 0, errors.New("pgstore: claim of an empty event id")
	}
	key := storedID(eventID)
	bctx, cancel := s.bound(ctx)
	pc, err := s.pool.Acquire(bctx)
	if err != nil {
		cancel()
		return 0, fmt.Errorf("pgstore: claim event %s: %w", shownID(eventID), err)
	}
	// Released in a transaction (a rollback that failed), the connection
	// is closed by the pool, never reused.
	defer pc.Release()
	st, err := s.peek(bctx, pc.Conn(), key, eventID)
	cancel()
	switch {
	case err != nil || st == webhook.ClaimDone:
		return st, err
	case st == webhook.ClaimInProgress:
		// A claim of the usual path (Reconcile's, say): the usual path
		// waits for it to settle, as the handler's claim wait says.
		return 0, nil
	}
	token, err := lease.NewToken()
	if err != nil {
		return 0, fmt.Errorf("pgstore: %w", err)
	}
	conn := pc.Conn()
	began, committed := false, false
	defer func() {
		if began && !committed {
			s.endTx(ctx, conn, "rollback")
		}
	}()
	st, err = s.claimIn(ctx, conn, key, token, eventID, wait, &began)
	if err != nil || st != webhook.ClaimAcquired {
		return st, err
	}
	var last int
	tx := &connTx{conn: conn, last: &last}
	rctx, stop := s.watch(context.WithValue(ctx, txKey{}, txValue{s, tx}))
	err = run(rctx, webhook.Claim{EventID: eventID, Status: webhook.ClaimAcquired, Token: token})
	if silent := stop(); silent != nil {
		// Not wrapped: the function may have returned the same error (its
		// context's cause), and the handler takes run's error for the
		// function's failure.
		return webhook.ClaimAcquired, fmt.Errorf("pgstore: event %s: rolled back: %v", shownID(eventID), silent)
	}
	if err != nil && conn.IsClosed() {
		// The database went away under the function (a restart, a
		// network cut): a failure of the store's, not of the function.
		return webhook.ClaimAcquired, fmt.Errorf("pgstore: event %s: rolled back: %w (the function's error: %v)", shownID(eventID), errConnectionLost, err)
	}
	if err != nil {
		return webhook.ClaimAcquired, err
	}
	// The function succeeded: commit even if the sender hung up meanwhile.
	// A transaction a failed statement broke answers COMMIT with ROLLBACK.
	committed = true
	if tag, err := s.endTx(ctx, conn, "commit"); err != nil || tag.String() != "COMMIT" {
		if err == nil {
			err = pgx.ErrTxCommitRollback
		}
		return webhook.ClaimAcquired, fmt.Errorf("pgstore: event %s: commit: %w", shownID(eventID), err)
	}
	return webhook.ClaimAcquired, nil
}

// endTx commits or rolls back the transaction on conn, within the store's
// timeout (at once when the connection broke), even if ctx ended.
func (s *Store) endTx(ctx context.Context, conn *pgx.Conn, sql string) (pgconn.CommandTag, error) {
	cctx, cancel := s.bound(context.WithoutCancel(ctx))
	defer cancel()
	return conn.Exec(cctx, sql)
}

// peek reads what a delivery finds, on conn, without a write: 0 when the
// event is free to claim.
func (s *Store) peek(ctx context.Context, conn *pgx.Conn, key, eventID string) (webhook.ClaimStatus, error) {
	var status string
	err := conn.QueryRow(ctx, s.q.peek, key).Scan(&status)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("pgstore: claim event %s: %w", shownID(eventID), err)
	case status == "done":
		return webhook.ClaimDone, nil
	}
	return webhook.ClaimInProgress, nil
}

// claimIn begins a transaction on conn and claims key in it, the row
// written as done: ClaimAcquired, or why not. BEGIN and the first claim
// statement (claimInTx) go in one round trip; began says whether the
// transaction began (the caller then ends it). claimInTx sets the
// transaction's bounds: how long the claim waits for another's row lock
// (wait, at least 1 ms), and how long the server keeps the transaction,
// and its lock, for a client that went silent (the lease).
func (s *Store) claimIn(ctx context.Context, conn *pgx.Conn, key, token, eventID string, wait time.Duration, began *bool) (webhook.ClaimStatus, error) {
	lockWait, silent := s.bounds(wait)
	var b pgx.Batch
	b.Queue("begin")
	b.Queue(s.q.claimInTx, key, token, s.opts.retention.Microseconds(), lockWait, silent)
	sctx, cancel := context.WithTimeout(ctx, s.opts.timeout+wait)
	br := conn.SendBatch(sctx, &b)
	_, err := br.Exec()
	var status string
	if err == nil {
		err = br.QueryRow().Scan(&status)
	}
	if cerr := br.Close(); err == nil && cerr != nil && !errors.Is(cerr, pgx.ErrNoRows) {
		err = cerr
	}
	*began = conn.PgConn().TxStatus() != 'I'
	cancel()
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		if st, aerr := claimAnswer("", err, eventID); aerr == nil {
			return st, nil
		}
		return 0, fmt.Errorf("pgstore: event %s: begin and claim: %w", shownID(eventID), err)
	}
	if st, err := claimAnswer(status, err, eventID); err != nil || st != 0 {
		return st, err
	}
	// The row exists: taken over when it lapsed or expired, else why not.
	for range maxClaimTries {
		sctx, cancel := context.WithTimeout(ctx, s.opts.timeout+wait)
		err := conn.QueryRow(sctx, s.q.claim, key, token, s.opts.retention.Microseconds(), "done").Scan(&status)
		cancel()
		if st, err := claimAnswer(status, err, eventID); err != nil || st != 0 {
			return st, err
		}
	}
	return webhook.ClaimInProgress, nil
}

// claimAnswer reads a claim statement's answer: 0 and no error when it
// gave no row (the caller tries again).
func claimAnswer(status string, err error, eventID string) (webhook.ClaimStatus, error) {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, nil
	case errors.As(err, &pgErr) && pgErr.Code == "55P03": // lock_not_available
		return webhook.ClaimInProgress, nil
	case err != nil:
		return 0, fmt.Errorf("pgstore: claim event %s: %w", shownID(eventID), err)
	case status == "acquired":
		return webhook.ClaimAcquired, nil
	case status == "done":
		return webhook.ClaimDone, nil
	}
	return webhook.ClaimInProgress, nil
}

// watch returns ctx for a function run under a row lock, and stop, which
// ends the watch and says whether it cancelled ctx. From a third of the
// lease on, every third of the lease, it pings the database on another
// connection; the first ping that fails within the store's timeout (a
// frozen or unreachable database) cancels ctx, so that a function waiting
// on its transaction returns instead of hanging. A quick function costs no
// ping.
func (s *Store) watch(ctx context.Context) (context.Context, func() error) {
	ctx, cancel := context.WithCancelCause(ctx)
	every := max(s.opts.lease/3, time.Millisecond)
	var (
		mu      sync.Mutex
		stopped bool
		silent  error
		wg      sync.WaitGroup
	)
	var ping func()
	var t *time.Timer
	ping = func() {
		defer wg.Done()
		evidence, err := s.ping(ctx)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case stopped:
		case err != nil && evidence && ctx.Err() == nil:
			silent = fmt.Errorf("%w: %w", errDatabaseSilent, err)
			cancel(silent)
		default:
			wg.Add(1)
			t.Reset(every)
		}
	}
	wg.Add(1)
	mu.Lock()
	t = time.AfterFunc(every, ping)
	mu.Unlock()
	return ctx, func() error {
		mu.Lock()
		stopped = true
		if t.Stop() {
			wg.Done() // the ping never ran
		}
		mu.Unlock()
		cancel(nil) // cuts a ping in flight
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return silent
	}
}

// ping asks the database for an answer on a connection of the pool, within
// the store's timeout. A failure is evidence that the database stopped
// answering unless the pool had no connection to spare: then the wait was
// for one of the pool's, not for the database.
func (s *Store) ping(ctx context.Context) (evidence bool, err error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	st := s.pool.Stat()
	full := st.IdleConns() == 0 && st.TotalConns() >= st.MaxConns()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return !full, err
	}
	defer conn.Release()
	return true, conn.Ping(ctx)
}

// txBounds are the settings of ClaimAndRun's transactions, as text for
// set_config: the last lock wait asked for, and the lease.
type txBounds struct {
	wait           time.Duration
	lockWait, idle string
}

// bounds returns the lock wait (wait, at least 1 ms) and the silence bound
// (the lease) in milliseconds, kept from one call to the next (a handler
// asks the same wait every time).
func (s *Store) bounds(wait time.Duration) (lockWait, idle string) {
	if b := s.txBounds.Load(); b != nil && b.wait == wait {
		return b.lockWait, b.idle
	}
	b := &txBounds{wait: wait, lockWait: strconv.FormatInt(max(wait.Milliseconds(), 1), 10),
		idle: strconv.FormatInt(s.opts.lease.Milliseconds(), 10)}
	s.txBounds.Store(b)
	return b.lockWait, b.idle
}
