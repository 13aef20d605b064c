package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// ErrNoClaim is returned by a function made by Transactional when its
// context carries no claim: it was not called by a webhook.Handler.
var ErrNoClaim = errors.New("pgstore: no claim in the context: call the function through a webhook.Handler that uses this store")

// TxEventFunc processes one event inside tx, the transaction that also
// records the event as processed. The store commits it when the function
// returns nil and rolls it back otherwise: through a handler, tx.Commit
// and tx.Rollback return an error, and tx.Begin makes a savepoint (whose
// Commit and Rollback release it or roll back to it), as a pgx.Tx does.
type TxEventFunc func(ctx context.Context, tx pgx.Tx, ev *payments.Event) error

// Transactional returns an EventFunc that processes each event exactly
// once in effect: it begins a transaction, runs fn in it, marks the claimed
// event done in the same transaction, and commits. Your writes and the
// record that the event was processed commit together or not at all:
//
//   - fn returns an error (or panics): everything rolls back, the handler
//     releases the claim, and the next delivery runs fn again;
//   - the claim was taken over by another delivery because its lease ran
//     out (this replica stalled): the mark finds nothing to mark,
//     everything rolls back, and the function returns an error matching
//     webhook.ErrClaimLost, so the other delivery's work is the only one;
//   - the commit fails, or its answer is lost: either nothing committed
//     and the next delivery runs fn again, or all of it committed and the
//     next delivery is answered as a duplicate.
//
// The handler must use this Store (webhook.WithStore). It then claims each
// event inside the function's transaction (ClaimAndRun): the claim, your
// writes and the record commit together, in one commit, and the row lock
// is the claim's lease while the transaction is open (the package
// documentation, "The lease of Transactional", has its rules). Calling
// Transactional switches the Store to that path for every handler that
// uses it. On the usual path (Reconcile, or a handler whose store wraps
// this one), the function marks the claim the handler made, taken from the
// context (webhook.ClaimFromContext), in its transaction, and the
// handler's Complete that follows finds it done. The transaction uses the
// handler's context, which is cancelled when the claim can no longer be
// vouched for: a replica cut off from the database rolls back. fn must use
// tx, not the pool, for every write that must happen once, and must not
// leave tx idle for longer than the lease. It panics if fn is nil.
func (s *Store) Transactional(fn TxEventFunc) webhook.EventFunc {
	if fn == nil {
		panic("pgstore: Transactional with a nil function")
	}
	s.transactional.Store(true)
	return func(ctx context.Context, ev *payments.Event) error {
		claim, ok := webhook.ClaimFromContext(ctx)
		if !ok || claim.Token == "" {
			return ErrNoClaim
		}
		// Called by ClaimAndRun: its transaction claimed the event, and
		// it commits.
		if v, ok := ctx.Value(txKey{}).(txValue); ok && v.s == s {
			return fn(ctx, v.tx, ev)
		}
		// Begin is a store statement like the others: bounded by the
		// store's timeout, not only by the request (a frozen database
		// used to hold it until the sender hung up).
		bctx, cancelBegin := s.bound(ctx)
		tx, err := s.pool.Begin(bctx)
		cancelBegin()
		if err != nil {
			return fmt.Errorf("pgstore: event %s: begin: %w", shownID(claim.EventID), err)
		}
		committed := false
		// Also when fn panics: the handler recovers the panic, and the
		// connection must go back to the pool clean.
		defer func() {
			if !committed {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.timeout)
				defer cancel()
				_ = tx.Rollback(rctx)
			}
		}()
		if err := fn(ctx, tx, ev); err != nil {
			return err
		}
		if ctx.Err() != nil { // the handler gave up on the claim: say why
			return fmt.Errorf("pgstore: event %s: rolled back: %w", shownID(claim.EventID), context.Cause(ctx))
		}
		// The mark and the commit are the store's statements: bounded by
		// its timeout, as well as by the claim (the handler cancels ctx
		// when it can no longer vouch for it).
		sctx, cancel := s.bound(ctx)
		defer cancel()
		tag, err := tx.Exec(sctx, s.q.markDone, storedID(claim.EventID), claim.Token, s.opts.retention.Microseconds())
		if err != nil {
			return fmt.Errorf("pgstore: event %s: mark done: %w", shownID(claim.EventID), err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("pgstore: event %s: rolled back: %w (or the handler does not use this store)", shownID(claim.EventID), webhook.ErrClaimLost)
		}
		if err := tx.Commit(sctx); err != nil {
			return fmt.Errorf("pgstore: event %s: commit: %w", shownID(claim.EventID), err)
		}
		committed = true
		return nil
	}
}
