package pgstore

import (
	"context"
	"errors"
	"fmt"
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
	switch st, err := s.peek(ctx, key, eventID); {
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
	bctx, cancel := s.bound(ctx)
	tx, err := s.pool.BeginTx(bctx, pgx.TxOptions{BeginQuery: s.beginQuery(wait)})
	cancel()
	if err != nil {
		return 0, fmt.Errorf("pgstore: event %s: begin: %w", shownID(eventID), err)
	}
	committed := false
	defer func() {
		if !committed {
			s.rollback(ctx, tx)
		}
	}()
	st, err := s.claimIn(ctx, tx, key, token, eventID, wait)
	if err != nil || st != webhook.ClaimAcquired {
		return st, err
	}
	rctx, stop := s.watch(context.WithValue(ctx, txKey{}, txValue{s, tx}))
	err = run(rctx, webhook.Claim{EventID: eventID, Status: webhook.ClaimAcquired, Token: token})
	if silent := stop(); silent != nil {
		// Not wrapped: the function may have returned the same error (its
		// context's cause), and the handler takes run's error for the
		// function's failure.
		return webhook.ClaimAcquired, fmt.Errorf("pgstore: event %s: rolled back: %v", shownID(eventID), silent)
	}
	if err != nil && tx.Conn().IsClosed() {
		// The database went away under the function (a restart, a
		// network cut): a failure of the store's, not of the function.
		return webhook.ClaimAcquired, fmt.Errorf("pgstore: event %s: rolled back: %w (the function's error: %v)", shownID(eventID), errConnectionLost, err)
	}
	if err != nil {
		return webhook.ClaimAcquired, err
	}
	// The function succeeded: commit even if the sender hung up meanwhile.
	cctx, cancel := s.bound(context.WithoutCancel(ctx))
	defer cancel()
	if err := tx.Commit(cctx); err != nil {
		return webhook.ClaimAcquired, fmt.Errorf("pgstore: event %s: commit: %w", shownID(eventID), err)
	}
	committed = true
	return webhook.ClaimAcquired, nil
}

// peek reads what a delivery finds, without a write: 0 when the event is
// free to claim.
func (s *Store) peek(ctx context.Context, key, eventID string) (webhook.ClaimStatus, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var status string
	err := s.pool.QueryRow(ctx, s.q.peek, key).Scan(&status)
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

// beginQuery begins a transaction of ClaimAndRun with its bounds: how long
// its claim waits for another's row lock, and how long the server keeps
// the transaction (and its lock) for a client that went silent.
func (s *Store) beginQuery(wait time.Duration) string {
	ms := max(wait.Milliseconds(), 1)
	l := s.opts.lease.Milliseconds()
	// One round trip, two statements: settings local to the transaction.
	return fmt.Sprintf("BEGIN; SELECT set_config('lock_timeout', '%d', true), "+
		"set_config('idle_in_transaction_session_timeout', '%d', true), set_config('tcp_user_timeout', '%d', true)", ms, l, l)
}

// claimIn claims key inside tx, the row written as done: ClaimAcquired,
// or why not.
func (s *Store) claimIn(ctx context.Context, tx pgx.Tx, key, token, eventID string, wait time.Duration) (webhook.ClaimStatus, error) {
	for range maxClaimTries {
		sctx, cancel := context.WithTimeout(ctx, s.opts.timeout+wait)
		var status string
		err := tx.QueryRow(sctx, s.q.claim, key, token, s.opts.retention.Microseconds(), "done").Scan(&status)
		cancel()
		var pgErr *pgconn.PgError
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			continue
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
	return webhook.ClaimInProgress, nil
}

// rollback ends a transaction that did not commit, within the store's
// timeout (at once when its connection broke).
func (s *Store) rollback(ctx context.Context, tx pgx.Tx) {
	rctx, cancel := s.bound(context.WithoutCancel(ctx))
	defer cancel()
	_ = tx.Rollback(rctx)
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
