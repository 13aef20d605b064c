package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

type queueQueries struct {
	create, enqueue, setJob, read, forget string
	purgeDone, unfinished, purgeJobs      string
	hasMoved, waiting, dropMoved          string
}

func buildQueueQueries(table string) queueQueries {
	parts := strings.Split(table, ".")
	t := pgx.Identifier(parts).Sanitize()
	last := parts[len(parts)-1]
	const old = `enqueued_at < now() - $1::bigint * interval '1 microsecond'`
	return queueQueries{
		// One row per event: its id for the retention, its body until its
		// function committed, and its River job's id. The purge finds old
		// rows by a BRIN index, which costs an INSERT next to nothing.
		create: `CREATE TABLE IF NOT EXISTS ` + t + ` (
    event_id    text        PRIMARY KEY,
    enqueued_at timestamptz NOT NULL DEFAULT now(),
    body        bytea,
    job_id      bigint
);
CREATE INDEX IF NOT EXISTS ` + pgx.Identifier{last + "_brin"}.Sanitize() + ` ON ` + t + ` USING brin (enqueued_at)`,
		enqueue: `INSERT INTO ` + t + ` (event_id, body) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING RETURNING true`,
		setJob:  `UPDATE ` + t + ` SET job_id = $2 WHERE event_id = $1`,
		// Locked, so that two jobs of one event (an earlier release's
		// upgrade, a job inserted by hand) run its function one after
		// the other, the second finding no body.
		read:   `SELECT body FROM ` + t + ` WHERE event_id = $1 FOR NO KEY UPDATE`,
		forget: `UPDATE ` + t + ` SET body = NULL WHERE event_id = $1`,
		purgeDone: `DELETE FROM ` + t + ` WHERE ctid IN (SELECT ctid FROM ` + t + ` WHERE ` + old +
			` AND body IS NULL LIMIT $2)`,
		unfinished: `SELECT job_id FROM ` + t + ` WHERE ` + old + ` AND body IS NOT NULL AND job_id > $2 ORDER BY job_id LIMIT $3`,
		purgeJobs:  `DELETE FROM ` + t + ` WHERE job_id = ANY($1) AND body IS NOT NULL`,
		// An earlier release's table (an outbox): its column dropped,
		// once no event waits in it, under a lock that keeps its
		// receivers from adding one meanwhile.
		hasMoved:  `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '` + t + `'::regclass AND attname = 'moved' AND NOT attisdropped)`,
		waiting:   `LOCK TABLE ` + t + ` IN ACCESS EXCLUSIVE MODE; SELECT count(*) FROM ` + t + ` WHERE NOT moved`,
		dropMoved: `ALTER TABLE ` + t + ` ADD COLUMN IF NOT EXISTS job_id bigint, DROP COLUMN moved`,
	}
}

// Migrate creates or upgrades River's tables (rivermigrate, in the River
// client's schema), the Queue's table and the outcome table. It is
// idempotent and safe to run from every process at once; bounded by ctx
// alone. A table of an earlier release is upgraded once no event waits
// in its outbox (until then Migrate fails and says so).
// A DBA who migrates by hand runs River's (river migrate-up) and
// MigrationSQL.
func (q *Queue) Migrate(ctx context.Context) error {
	conn, err := q.w.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate the queue: %w", err)
	}
	defer conn.Release()
	// One migration at a time across processes: River's own migrations
	// are not safe to run concurrently.
	const lock = `SELECT pg_advisory_lock(hashtext('payments-go pgstore migrate queue'))`
	if _, err := conn.Exec(ctx, lock); err != nil {
		return fmt.Errorf("pgstore: migrate the queue: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('payments-go pgstore migrate queue'))`)
	}()
	m, err := rivermigrate.New(riverpgxv5.New(q.w.pool), &rivermigrate.Config{Schema: q.client.Schema(), Logger: q.w.cfg.Logger})
	if err == nil {
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		return fmt.Errorf("pgstore: migrate River's tables: %w", err)
	}
	for _, stmt := range strings.Split(q.w.q.create, ";\n") {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("pgstore: migrate %s: %w", q.w.cfg.Table, err)
		}
	}
	if err := q.upgrade(ctx); err != nil {
		return fmt.Errorf("pgstore: upgrade %s: %w", q.w.cfg.Table, err)
	}
	return q.w.outcomes.Migrate(ctx)
}

// upgrade drops an earlier release's outbox column, once it holds no
// waiting event (TestQueueMigrateUpgradesAnOutboxTable).
func (q *Queue) upgrade(ctx context.Context) error {
	var moved bool
	if err := q.w.pool.QueryRow(ctx, q.w.q.hasMoved).Scan(&moved); err != nil || !moved {
		return err
	}
	return pgx.BeginFunc(ctx, q.w.pool, func(tx pgx.Tx) error {
		lock, count, _ := strings.Cut(q.w.q.waiting, "; ")
		var waiting int
		if _, err := tx.Exec(ctx, lock); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, count).Scan(&waiting); err != nil {
			return err
		}
		if waiting > 0 {
			return fmt.Errorf("%d events wait in the earlier release's outbox: run its workers until none waits, then migrate", waiting)
		}
		_, err := tx.Exec(ctx, q.w.q.dropMoved)
		return err
	})
}

// MigrationSQL returns the statements that create the Queue's own tables
// (not River's), for a DBA to apply by hand.
func (q *Queue) MigrationSQL() string { return q.w.q.create + ";\n" + q.w.outcomes.MigrationSQL() }
