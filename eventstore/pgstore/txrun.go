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
	errTxIdle         = errors.New("pgstore: the function left its transaction idle")
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
	// Once the connection is back: every WithPurgeEvery-th event acquired
	// here, as Claim does, deletes a batch of expired rows.
	committed := false
	defer func() {
		if committed {
			s.maybePurge(ctx)
		}
	}()
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
	defer func() {
		// A transaction that began (open, or broken by an error) and did
		// not commit.
		if !committed && conn.PgConn().TxStatus() != 'I' {
			s.endTx(ctx, conn, "rollback")
		}
	}()
	st, err = s.claimIn(ctx, conn, key, token, eventID, wait)
	if err != nil || st != webhook.ClaimAcquired {
		return st, err
	}
	var last int
	tx := &connTx{idle: newIdleClock(), conn: conn, last: &last}
	rctx, stop := s.watch(context.WithValue(ctx, txKey{}, txValue{s, tx}), tx.idle)
	defer stop() // also when run panics (stop may run twice)
	tx.ctx = rctx
	err = run(rctx, webhook.Claim{EventID: eventID, Status: webhook.ClaimAcquired, Token: token})
	if cause := stop(); cause != nil {
		// The database went silent, or the transaction idle: not wrapped,
		// since the function may have returned the same error (its
		// context's cause), and the handler takes run's error for the
		// function's failure.
		return webhook.ClaimAcquired, fmt.Errorf("pgstore: event %s: rolled back: %v", shownID(eventID), cause)
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
	err := conn.QueryRow(ctx, s.q.peek, key, s.opts.retention.Microseconds()).Scan(&status)
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
// statement (claimInTx) go in one round trip; the caller ends the
// transaction whatever the answer. claimInTx sets the
// transaction's bounds: how long the claim waits for another's row lock
// (wait, at least 1 ms), and how long the server keeps the transaction,
// and its lock, for a client that went silent (the lease).
func (s *Store) claimIn(ctx context.Context, conn *pgx.Conn, key, token, eventID string, wait time.Duration) (webhook.ClaimStatus, error) {
	lockWait := strconv.FormatInt(max(wait.Milliseconds(), 1), 10)
	var b pgx.Batch
	b.Queue("begin")
	b.Queue(s.q.claimInTx, key, lockWait, s.silentMs)
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
	cancel()
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		if st, aerr := claimAnswer("", err, eventID); aerr == nil {
			return st, nil
		}
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "23502" { // not_null_violation
			return 0, fmt.Errorf("pgstore: event %s: begin and claim: %w (the table predates this release: run Store.Migrate)", shownID(eventID), err)
		}
		return 0, fmt.Errorf("pgstore: event %s: begin and claim: %w", shownID(eventID), err)
	}
	if st, err := claimAnswer(status, err, eventID); err != nil || st != 0 {
		return st, err
	}
	// The row exists: taken over when it lapsed or expired, else why not.
	for range maxClaimTries {
		sctx, cancel := context.WithTimeout(ctx, s.opts.timeout+wait)
		retention := s.opts.retention.Microseconds()
		err := conn.QueryRow(sctx, s.q.claim, key, token, retention, "done", retention).Scan(&status)
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
// ends the watch and returns why it cancelled ctx, if it did:
//
//   - the database went silent: from a third of the lease on, every third
//     of the lease, it pings the database on another connection; the first
//     ping that fails within the store's timeout (a frozen or unreachable
//     database) cancels ctx, so that a function waiting on its transaction
//     returns instead of hanging. A quick function costs no ping;
//   - the transaction was left idle (no statement in flight, idle) for the
//     lease minus its margin: the server ends it at the lease
//     (idle_in_transaction_session_timeout), and another delivery may then
//     take the event, so the function is stopped first, as the handler
//     stops a function whose lease it cannot renew.
func (s *Store) watch(ctx context.Context, idle *idleClock) (context.Context, func() error) {
	ctx, cancel := context.WithCancelCause(ctx)
	every := max(s.opts.lease/3, time.Millisecond)
	limit := s.opts.lease - idleMargin(s.opts.lease)
	var (
		mu      sync.Mutex
		stopped bool
		cause   error
		wg      sync.WaitGroup
	)
	var ping, check func()
	var pt, it *time.Timer
	ping = func() {
		defer wg.Done()
		evidence, err := s.ping(ctx)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case stopped:
		case err != nil && evidence && ctx.Err() == nil:
			cause = fmt.Errorf("%w: %w", errDatabaseSilent, err)
			cancel(cause)
		default:
			wg.Add(1)
			pt.Reset(every)
		}
	}
	check = func() {
		defer wg.Done()
		since, isIdle := idle.idleSince()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case stopped || ctx.Err() != nil:
		case isIdle && time.Since(since) >= limit:
			cause = fmt.Errorf("%w (%v with no statement; the server ends it at %v)", errTxIdle, limit, s.opts.lease)
			cancel(cause)
		default:
			next := limit
			if isIdle {
				next = limit - time.Since(since)
			}
			wg.Add(1)
			it.Reset(next)
		}
	}
	wg.Add(2)
	mu.Lock()
	pt = time.AfterFunc(every, ping)
	it = time.AfterFunc(limit, check)
	mu.Unlock()
	return ctx, func() error {
		mu.Lock()
		stopped = true
		for _, t := range []*time.Timer{pt, it} {
			if t.Stop() {
				wg.Done() // its function never ran
			}
		}
		mu.Unlock()
		cancel(nil) // cuts a ping in flight
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return cause
	}
}

// idleMargin is how long before the server ends an idle transaction the
// store stops its function: a fifth of the lease, at least 100 ms, and
// never more than half the lease, which wins below 200 ms (the margin
// webhook.Handler keeps before a lease ends).
func idleMargin(lease time.Duration) time.Duration {
	return min(max(lease/5, 100*time.Millisecond), lease/2)
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
