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

	"github.com/paymentsapi/payments-go/eventstore/internal/lease"
	"github.com/paymentsapi/payments-go/webhook"
)

const (
	// DefaultTable is the table a Store uses unless WithTable says
	// otherwise.
	DefaultTable = "payments_webhook_events"
	// DefaultLease is how long a claim lasts before another delivery may
	// take the event over (WithLease): shorter than the service's first
	// retry back-off, so that a dead replica's claim has lapsed by the
	// time the event is delivered again.
	DefaultLease = lease.DefaultLease
	// DefaultRetention is how long a processed event id is remembered
	// (WithRetention).
	DefaultRetention = lease.DefaultRetention
	// MinRetention is the shortest retention New accepts: twice
	// webhook.DefaultSignatureTolerance.
	MinRetention = lease.MinRetention
	// DefaultPurgeEvery is how many acquired claims a Store makes between
	// two opportunistic purges (WithPurgeEvery).
	DefaultPurgeEvery = 1000
	// PurgeBatch is the most rows one opportunistic purge, or one
	// statement of Purge, deletes.
	PurgeBatch = 1000
)

// ErrInvalidOption matches every error New returns for a bad option.
var ErrInvalidOption = lease.ErrInvalidOption

func invalid(format string, args ...any) error { return lease.Invalid("pgstore", format, args...) }

// Option configures a Store.
type Option func(*options)

type options struct {
	table      string
	lease      time.Duration
	retention  time.Duration
	purgeEvery int
	logger     *slog.Logger
}

// WithTable sets the table (default DefaultTable): lower-case letters,
// digits and underscores, optionally qualified by a schema ("ops.webhooks").
func WithTable(name string) Option { return func(o *options) { o.table = name } }

// WithLease sets how long a claim lasts (default DefaultLease; at least
// 1ms, in whole milliseconds, shorter than the retention). The handler
// cancels the EventFunc's context when it runs out; choose it longer than
// your slowest processing and shorter than the service's first retry delay.
func WithLease(d time.Duration) Option { return func(o *options) { o.lease = d } }

// WithRetention sets how long a processed event id is remembered (default
// DefaultRetention, at least MinRetention). Keep it longer than the
// service's whole retry schedule.
func WithRetention(d time.Duration) Option { return func(o *options) { o.retention = d } }

// WithPurgeEvery makes the store delete up to PurgeBatch expired rows after
// every n-th claim it acquires (default DefaultPurgeEvery), in the claiming
// goroutine. 0 turns the opportunistic purge off: then call Purge yourself,
// from a ticker or a cron job.
func WithPurgeEvery(n int) Option { return func(o *options) { o.purgeEvery = n } }

// WithLogger makes the store log the failures of its opportunistic purges
// (at warning level), which are otherwise ignored until the next one.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// Store is a webhook.Store in a PostgreSQL table, shared by every
// replica of a webhook receiver. Make it with New; it is safe for
// concurrent use and starts no goroutine.
type Store struct {
	pool   *pgxpool.Pool
	opts   options
	q      queries
	claims atomic.Uint64
}

var _ webhook.Store = (*Store)(nil)

// New returns a store on pool. It does not touch the database: create the
// table with Migrate, or by hand with MigrationSQL's statements. Its errors
// for bad options match ErrInvalidOption.
func New(pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, invalid("New needs a pool")
	}
	o := options{table: DefaultTable, lease: DefaultLease, retention: DefaultRetention, purgeEvery: DefaultPurgeEvery}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkTable(o.table); err != nil {
		return nil, err
	}
	if err := lease.Check("pgstore", o.lease, o.retention); err != nil {
		return nil, err
	}
	if o.purgeEvery < 0 {
		return nil, invalid("WithPurgeEvery(%d): want 0 (off) or more", o.purgeEvery)
	}
	return &Store{pool: pool, opts: o, q: buildQueries(o.table)}, nil
}

// maxClaimTries bounds the claim statement's re-runs when a concurrent claim
// hides the row from its snapshot (each re-run sees that claim).
const maxClaimTries = 3

// Claim implements webhook.Store in one statement: it inserts the id,
// or takes over its row when that row's lease lapsed or its retention
// expired, comparing with the database's clock so that replicas with skewed
// clocks agree.
func (s *Store) Claim(ctx context.Context, eventID string) (webhook.Claim, error) {
	if eventID == "" {
		return webhook.Claim{}, errors.New("pgstore: claim of an empty event id")
	}
	token, err := lease.NewToken()
	if err != nil {
		return webhook.Claim{}, fmt.Errorf("pgstore: %w", err)
	}
	for range maxClaimTries {
		start := time.Now()
		var status string
		err := s.pool.QueryRow(ctx, s.q.claim, eventID, token, s.opts.lease.Microseconds()).Scan(&status)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			continue
		case err != nil:
			return webhook.Claim{}, fmt.Errorf("pgstore: claim event %q: %w", eventID, err)
		}
		c := webhook.Claim{EventID: eventID}
		switch status {
		case "acquired":
			c.Status, c.Token, c.LeaseExpires = webhook.ClaimAcquired, token, lease.Expiry(start, s.opts.lease)
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

// Complete implements webhook.Store: the row becomes a completion
// remembered for the retention. A claim already marked done with the same
// token (by Transactional) completes without a change; any other claim gets
// webhook.ErrClaimLost.
func (s *Store) Complete(ctx context.Context, c webhook.Claim) error {
	var ok bool
	err := s.pool.QueryRow(ctx, s.q.complete, c.EventID, c.Token, s.opts.retention.Microseconds()).Scan(&ok)
	if err != nil {
		return fmt.Errorf("pgstore: complete event %q: %w", c.EventID, err)
	}
	if !ok {
		return fmt.Errorf("pgstore: complete event %q: %w", c.EventID, webhook.ErrClaimLost)
	}
	return nil
}

// Release implements webhook.Store: it deletes the claim's row while
// the claim still owns it, and returns webhook.ErrClaimLost otherwise.
func (s *Store) Release(ctx context.Context, c webhook.Claim) error {
	tag, err := s.pool.Exec(ctx, s.q.release, c.EventID, c.Token)
	if err != nil {
		return fmt.Errorf("pgstore: release event %q: %w", c.EventID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: release event %q: %w", c.EventID, webhook.ErrClaimLost)
	}
	return nil
}
