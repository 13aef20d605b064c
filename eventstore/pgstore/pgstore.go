package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paymentsapi/payments-go/webhook"
)

const (
	// DefaultTable is the table a ClaimStore uses unless WithTable says
	// otherwise.
	DefaultTable = "payments_webhook_events"
	// DefaultLease is how long a claim lasts, unless renewed, before
	// another delivery may take the event over (WithLease):
	// webhook.DefaultLease. The handler renews it every third of the lease
	// while the function runs, so a dead replica's claim lapses within one
	// lease of its last renewal.
	DefaultLease = webhook.DefaultLease
	// DefaultTimeout bounds each statement the store sends (WithTimeout),
	// whatever deadline the caller's context has: pgx itself has none.
	DefaultTimeout = webhook.DefaultClaimStoreTimeout
	// DefaultRetention is how long a processed event id is remembered
	// (WithRetention).
	DefaultRetention = 7 * 24 * time.Hour
	// MinRetention is the shortest retention NewClaimStore accepts: twice
	// webhook.DefaultSignatureTolerance. A delivery signed at t verifies
	// until t+tolerance on a receiver whose clock is up to tolerance behind,
	// so an id forgotten earlier could be replayed.
	MinRetention = 2 * webhook.DefaultSignatureTolerance
	// DefaultPurgeEvery is how many acquired claims a ClaimStore makes between
	// two opportunistic purges (WithPurgeEvery).
	DefaultPurgeEvery = 1000
	// PurgeBatch is the most rows one opportunistic purge, or one
	// statement of Purge, deletes.
	PurgeBatch = 1000
)

// ErrInvalidOption matches every error NewClaimStore returns for a bad option.
var ErrInvalidOption = errors.New("invalid claim store option")

// Option configures a ClaimStore or an OutcomeStore: WithTable, WithTimeout and
// WithLogger apply to both; WithLease, WithRetention and WithPurgeEvery to a
// ClaimStore only (NewOutcomeStore refuses them).
type Option func(*options)

type options struct {
	table      string
	lease      time.Duration
	retention  time.Duration
	timeout    time.Duration
	purgeEvery int
	logger     *slog.Logger
	claimOnly  []string // the options given that configure a ClaimStore only
	noNotify   bool     // a test hook (export_test.go): an OutcomeStore that does not NOTIFY
	// afterCommit: a Queue's OutcomeStore, which notifies after its
	// commits (Worker.Work), not inside them.
	afterCommit bool
}

// WithTable sets the table: lower-case letters, digits and underscores,
// optionally qualified by a schema ("ops.webhooks"). A ClaimStore's default is
// DefaultTable, an OutcomeStore's DefaultOutcomeTable: give the two stores
// different tables.
func WithTable(name string) Option { return func(o *options) { o.table = name } }

// WithLease sets how long a claim lasts unless renewed (default
// DefaultLease; at least 1ms, in whole milliseconds, shorter than the
// retention). The handler renews it every third of the lease while the
// function runs, and cancels the function's context when it cannot. Keep
// it well under the time the service keeps retrying (a third of it, as
// the default does for the sandbox's 15 seconds), so that the claim of a
// replica that died lapses while the service still retries. A ClaimStore's
// option only.
func WithLease(d time.Duration) Option {
	return func(o *options) { o.lease = d; o.claimOnly = append(o.claimOnly, "WithLease") }
}

// WithTimeout sets the deadline of each statement the store sends (default
// DefaultTimeout; positive): a database that hangs, or a network that
// drops packets silently, costs an error within it. A shorter deadline of
// the caller's context wins. Migrate is bounded by its context alone.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithRetention sets how long a processed event id is remembered (default
// DefaultRetention, at least MinRetention). Keep it longer than the
// service's whole retry schedule. A ClaimStore's option only: an outcome is kept
// until you delete its row.
func WithRetention(d time.Duration) Option {
	return func(o *options) { o.retention = d; o.claimOnly = append(o.claimOnly, "WithRetention") }
}

// WithPurgeEvery makes the store delete up to PurgeBatch expired rows after
// every n-th claim it acquires (default DefaultPurgeEvery), in the claiming
// goroutine. 0 turns the opportunistic purge off: then call Purge yourself,
// from a ticker or a cron job. A ClaimStore's option only.
func WithPurgeEvery(n int) Option {
	return func(o *options) { o.purgeEvery = n; o.claimOnly = append(o.claimOnly, "WithPurgeEvery") }
}

// WithLogger makes a ClaimStore log the failures of its opportunistic purges (at
// warning level), which are otherwise ignored until the next one, and an
// OutcomeStore's ApplyTx log conflicting final events (ids and states only)
// as outcome.Tracker does.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// ClaimStore is a webhook.ClaimStore in a PostgreSQL table, shared by every
// replica of a webhook receiver. Make it with NewClaimStore; it is safe for
// concurrent use and starts no goroutine.
type ClaimStore struct {
	pool   *pgxpool.Pool
	opts   options
	q      queries
	claims atomic.Uint64
}

var _ webhook.ClaimStore = (*ClaimStore)(nil)

// NewClaimStore returns a store on pool. It does not touch the database: create the
// table with Migrate, or by hand with MigrationSQL's statements. Its errors
// for bad options match ErrInvalidOption.
func NewClaimStore(pool *pgxpool.Pool, opts ...Option) (*ClaimStore, error) {
	if pool == nil {
		return nil, invalid("NewClaimStore needs a pool")
	}
	o := options{table: DefaultTable, lease: DefaultLease, retention: DefaultRetention, timeout: DefaultTimeout, purgeEvery: DefaultPurgeEvery}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkTable(o.table); err != nil {
		return nil, err
	}
	if err := checkLease(o.lease, o.retention, o.timeout); err != nil {
		return nil, err
	}
	if o.purgeEvery < 0 {
		return nil, invalid("WithPurgeEvery(%d): want 0 (off) or more", o.purgeEvery)
	}
	return &ClaimStore{pool: pool, opts: o, q: buildQueries(o.table)}, nil
}

// maxClaimTries bounds the claim statement's re-runs when a concurrent claim
// hides the row from its snapshot (each re-run sees that claim).
const maxClaimTries = 3

// bound gives one call its deadline.
func (s *ClaimStore) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return boundCall(ctx, s.opts.timeout)
}

// Claim implements webhook.ClaimStore in one statement: it inserts the id,
// or takes over its row when that row's lease lapsed or its retention
// expired, comparing with the database's clock so that replicas with skewed
// clocks agree.
func (s *ClaimStore) Claim(ctx context.Context, eventID string) (webhook.Claim, error) {
	if eventID == "" {
		return webhook.Claim{}, errors.New("pgstore: claim of an empty event id")
	}
	token, err := newToken()
	if err != nil {
		return webhook.Claim{}, fmt.Errorf("pgstore: %w", err)
	}
	qctx, cancel := s.bound(ctx)
	defer cancel()
	for range maxClaimTries {
		start := time.Now()
		var status string
		err := s.pool.QueryRow(qctx, s.q.claim, storedID(eventID), token, s.opts.lease.Microseconds(), "processing", s.opts.retention.Microseconds()).Scan(&status)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			continue
		case err != nil:
			return webhook.Claim{}, fmt.Errorf("pgstore: claim event %s: %w", shownID(eventID), err)
		}
		c := webhook.Claim{EventID: eventID}
		switch status {
		case "acquired":
			c.Status, c.Token, c.LeaseExpires = webhook.ClaimAcquired, token, leaseExpiry(start, s.opts.lease)
			s.maybePurge(ctx)
		case "done":
			c.Status = webhook.ClaimDone
		default:
			c.Status = webhook.ClaimInProgress
		}
		return c, nil
	}
	// Claimed and settled faster than we could look, every time: let the
	// service deliver again.
	return webhook.Claim{EventID: eventID, Status: webhook.ClaimInProgress}, nil
}

// Renew implements webhook.ClaimStore: it extends the lease of a claim whose
// row still holds its token unsettled, even past its lease when nobody took
// it over. A claim its own token completed (Transactional) is returned
// unchanged; any other gets webhook.ErrClaimLost.
func (s *ClaimStore) Renew(ctx context.Context, c webhook.Claim) (webhook.Claim, error) {
	if c.Token == "" {
		return c, fmt.Errorf("pgstore: renew event %s: %w", shownID(c.EventID), webhook.ErrClaimLost)
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	start := time.Now()
	var status string
	err := s.pool.QueryRow(ctx, s.q.renew, storedID(c.EventID), c.Token, s.opts.lease.Microseconds()).Scan(&status)
	switch {
	case err == nil && status == "renewed":
		c.LeaseExpires = leaseExpiry(start, s.opts.lease)
		return c, nil
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return c, fmt.Errorf("pgstore: renew event %s: %w", shownID(c.EventID), err)
	}
	// The statement's snapshot may predate a commit that marked the claim
	// done while the renewal waited for its row (Transactional): look again.
	var state string
	err = s.pool.QueryRow(ctx, s.q.state, storedID(c.EventID), c.Token).Scan(&state)
	switch {
	case err == nil && state == "done":
		return c, nil
	case err == nil || errors.Is(err, pgx.ErrNoRows):
		return c, fmt.Errorf("pgstore: renew event %s: %w", shownID(c.EventID), webhook.ErrClaimLost)
	}
	return c, fmt.Errorf("pgstore: renew event %s: %w", shownID(c.EventID), err)
}

// Complete implements webhook.ClaimStore: the row becomes a completion
// remembered for the retention, unless another claim holds it within its
// lease or completed it (webhook.ErrClaimLost). A claim that lapsed, or a
// row that was purged, still completes when nobody took it over; a claim
// already completed by its token (Transactional) completes without a
// change. (When the row is gone, a second statement inserts it.)
func (s *ClaimStore) Complete(ctx context.Context, c webhook.Claim) error {
	if c.Token == "" {
		return fmt.Errorf("pgstore: complete event %s: %w", shownID(c.EventID), webhook.ErrClaimLost)
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var ok bool
	err := s.pool.QueryRow(ctx, s.q.complete, storedID(c.EventID), c.Token, s.opts.retention.Microseconds()).Scan(&ok)
	if err != nil {
		return fmt.Errorf("pgstore: complete event %s: %w", shownID(c.EventID), err)
	}
	if ok {
		return nil
	}
	// Nothing to update: the row is gone (a lapsed claim purged), or
	// another claim holds it.
	tag, err := s.pool.Exec(ctx, s.q.insertDone, storedID(c.EventID), c.Token, s.opts.retention.Microseconds())
	switch {
	case err != nil:
		return fmt.Errorf("pgstore: complete event %s: %w", shownID(c.EventID), err)
	case tag.RowsAffected() == 0:
		return fmt.Errorf("pgstore: complete event %s: %w", shownID(c.EventID), webhook.ErrClaimLost)
	}
	return nil
}

// Release implements webhook.ClaimStore: it deletes the claim's row while
// the claim still owns it, and returns webhook.ErrClaimLost otherwise.
func (s *ClaimStore) Release(ctx context.Context, c webhook.Claim) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, s.q.release, storedID(c.EventID), c.Token)
	if err != nil {
		return fmt.Errorf("pgstore: release event %s: %w", shownID(c.EventID), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: release event %s: %w", shownID(c.EventID), webhook.ErrClaimLost)
	}
	return nil
}
