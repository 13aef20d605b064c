package pgstore

import (
	"context"
	"fmt"
	"log/slog"
)

// MigrationSQL returns the statements Migrate runs, separated by ";\n", for
// a DBA to apply by hand (the package documentation shows them for
// DefaultTable).
func (s *ClaimStore) MigrationSQL() string {
	return s.q.createTable + ";\n" + s.q.createIndex + ";\n"
}

// Migrate creates the store's table and its index when they do not exist,
// and upgrades a table of an earlier release. A table without claimed_at
// (0.1): it adds the column, fills it from each row's expiry, sets the
// fillfactor, and replaces the index on expires_at by one on claimed_at, so
// that completions become HOT updates; this rewrites every row once, under
// a lock that holds the table's claims back: on a large table, run it at a
// quiet time. A table whose state, token or expires_at is NOT NULL: it
// drops those constraints (a change of the catalogue alone), so that the
// narrow completions 0.2's Transactional wrote fit, and read as done
// (TestMigrateAllowsNarrowRows). The store's statements need the upgraded
// table: run Migrate (or the upgrade by hand) before the new release
// serves. Migrate
// is idempotent, and safe to run from every replica at start-up at once: a
// transaction-scoped advisory lock makes concurrent runs wait for each
// other. On a table that is up to date it takes no lock on the table: a
// replica that starts while others claim events waits for none of them,
// and holds none back (TestMigrateOfAnUpToDateTableLocksNothing). Its
// statements are bounded by ctx alone (not by WithTimeout),
// since one may wait for another replica's migration: give ctx a deadline.
func (s *ClaimStore) Migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	// A no-op once committed.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	fail := func(err error) error { return fmt.Errorf("pgstore: migrate table %s: %w", s.opts.table, err) }
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('payments-go pgstore migrate ' || $1))`, s.opts.table); err != nil {
		return fail(err)
	}
	if _, err := tx.Exec(ctx, s.q.createTable); err != nil {
		return fail(err)
	}
	var current bool
	if err := tx.QueryRow(ctx, s.q.hasClaimedAt, s.q.table).Scan(&current); err != nil {
		return fail(err)
	}
	if !current {
		for i, q := range s.q.upgrade {
			var args []any
			if i == 1 {
				args = append(args, s.opts.retention.Microseconds())
			}
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				return fail(err)
			}
		}
	}
	var notNull bool
	if err := tx.QueryRow(ctx, s.q.hasNotNull, s.q.table).Scan(&notNull); err != nil {
		return fail(err)
	}
	if notNull {
		if _, err := tx.Exec(ctx, s.q.dropNotNull); err != nil {
			return fail(err)
		}
	}
	// Without a lock when there is no such index.
	if _, err := tx.Exec(ctx, s.q.dropOldIndex); err != nil {
		return fail(err)
	}
	var indexed bool
	if err := tx.QueryRow(ctx, s.q.hasIndex, s.q.table, s.q.indexName).Scan(&indexed); err != nil {
		return fail(err)
	}
	if !indexed {
		if _, err := tx.Exec(ctx, s.q.createIndex); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err)
	}
	return nil
}

// Purge deletes every row whose time is up: completions past their
// retention and claims whose lease lapsed (a lapsed claim is free to take
// over anyway; its owner, if alive, gets webhook.ErrClaimLost). It deletes
// PurgeBatch rows per statement (each bounded by WithTimeout), skipping rows
// that a claim in flight has locked, and returns how many it deleted. Run it on a schedule of yours when
// the opportunistic purge is off (WithPurgeEvery(0)).
func (s *ClaimStore) Purge(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := s.purgeBatch(ctx)
		total += n
		if err != nil || n < PurgeBatch {
			return total, err
		}
	}
}

func (s *ClaimStore) purgeBatch(ctx context.Context) (int64, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, s.q.purge, PurgeBatch, s.opts.retention.Microseconds())
	if err != nil {
		return 0, fmt.Errorf("pgstore: purge table %s: %w", s.opts.table, err)
	}
	return tag.RowsAffected(), nil
}

// maybePurge runs one batch of purge after every purgeEvery-th acquired
// claim. Its failure only delays the purge to the next time.
func (s *ClaimStore) maybePurge(ctx context.Context) {
	every := uint64(s.opts.purgeEvery)
	if every == 0 || s.claims.Add(1)%every != 0 {
		return
	}
	if _, err := s.purgeBatch(ctx); err != nil && s.opts.logger != nil {
		s.opts.logger.LogAttrs(ctx, slog.LevelWarn, "pgstore: opportunistic purge failed; the next one will retry", slog.String("error", err.Error()))
	}
}
