package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

type queueQueries struct {
	create, enqueue, setJob, read, forget string
	purgeDone, unfinished, purgeJobs      string
	hasMoved, dropMoved, sweep            string
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
		// An earlier release's table: job ids added and the outbox's
		// column dropped; its events with a body and no job id get a job
		// (sweep), once, even those that had one (the worker's row lock
		// then runs the function of only one of them).
		hasMoved:  `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '` + t + `'::regclass AND attname = 'moved' AND NOT attisdropped)`,
		dropMoved: `ALTER TABLE ` + t + ` ADD COLUMN IF NOT EXISTS job_id bigint, DROP COLUMN moved`,
		sweep: `UPDATE ` + t + ` SET job_id = 0 WHERE event_id IN (SELECT event_id FROM ` + t +
			` WHERE job_id IS NULL AND body IS NOT NULL LIMIT 1000 FOR UPDATE SKIP LOCKED) RETURNING event_id`,
	}
}

// Migrate creates or upgrades River's tables (rivermigrate, in the River
// client's schema), the Queue's table and the outcome table. It is
// idempotent and safe to run from every process at once; bounded by ctx
// alone. A table of an earlier release gets job ids, and each event it
// holds unprocessed gets its River job (TestQueueUpgradesAnOutboxTable).
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
	var moved bool
	for _, stmt := range append(strings.Split(q.w.q.create, ";\n"), q.w.q.hasMoved, q.w.q.dropMoved) {
		switch {
		case stmt == q.w.q.hasMoved:
			err = conn.QueryRow(ctx, stmt).Scan(&moved)
		case stmt != q.w.q.dropMoved || moved:
			_, err = conn.Exec(ctx, stmt)
		}
		if err != nil {
			return fmt.Errorf("pgstore: migrate %s: %w", q.w.cfg.Table, err)
		}
	}
	if err := sweep(ctx, q.w, q.client); err != nil {
		return err
	}
	return q.w.outcomes.Migrate(ctx)
}

// sweep gives a River job to each event that has a body and no job id:
// those an earlier release's receivers recorded.
func sweep(ctx context.Context, w *Worker, client *river.Client[pgx.Tx]) error {
	for n := 1000; n == 1000; {
		err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
			rows, _ := tx.Query(ctx, w.q.sweep)
			ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			n = len(ids)
			for i := 0; err == nil && i < len(ids); i++ {
				var res *rivertype.JobInsertResult
				if res, err = client.InsertTx(ctx, tx, EventArgs{ID: ids[i]}, w.insertOpts()); err == nil {
					_, err = tx.Exec(ctx, w.q.setJob, ids[i], res.Job.ID)
				}
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("pgstore: give jobs to the events of %s an earlier release recorded: %w", w.cfg.Table, err)
		}
	}
	return nil
}

// MigrationSQL returns the statements that create the Queue's own tables
// (not River's), for a DBA to apply by hand.
func (q *Queue) MigrationSQL() string { return q.w.q.create + ";\n" + q.w.outcomes.MigrationSQL() }
