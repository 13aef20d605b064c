package pgstore

import (
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// identPart is one part of a table name: lower case, so that the quoted and
// the unquoted spelling name the same table in a DBA's hand-written SQL.
var identPart = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// maxTablePart leaves room in PostgreSQL's 63-byte identifiers for the
// index name, which is the table name plus indexSuffix (oldIndexSuffix
// named the index of the tables of earlier releases, which Migrate drops).
const (
	indexSuffix    = "_claimed_at_idx"
	oldIndexSuffix = "_expires_at_idx"
	maxTablePart   = 63 - len(indexSuffix)
)

// checkTable validates a table name, "table" or "schema.table".
func checkTable(name string) error {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return invalid("table name %q: at most one dot (schema.table)", name)
	}
	for _, p := range parts {
		if !identPart.MatchString(p) || len(p) > maxTablePart {
			return invalid("table name %q: each part must match [a-z_][a-z0-9_]* and be at most %d bytes", name, maxTablePart)
		}
	}
	return nil
}

// queries are the store's statements, built once for its table.
type queries struct {
	createTable, createIndex string
	upgrade                  []string
	dropOldIndex             string
	hasClaimedAt, table      string
	hasNotNull, dropNotNull  string
	hasIndex, indexName      string
	claim, renew, state      string
	complete, insertDone     string
	markDone                 string
	release, purge           string
}

func buildQueries(table string) queries {
	parts := strings.Split(table, ".")
	t := pgx.Identifier(parts).Sanitize()
	idx := pgx.Identifier{parts[len(parts)-1] + indexSuffix}.Sanitize()
	oldIdx := pgx.Identifier{parts[len(parts)-1] + oldIndexSuffix}
	if len(parts) == 2 {
		oldIdx = append(pgx.Identifier{parts[0]}, oldIdx...)
	}
	const micros = "$3::bigint * interval '1 microsecond'"
	return queries{
		table: t,
		createTable: `CREATE TABLE IF NOT EXISTS ` + t + ` (
    event_id   text        PRIMARY KEY,
    state      text        CHECK (state IN ('processing', 'done')),
    token      text,
    expires_at timestamptz,
    claimed_at timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 90)`,
		createIndex: `CREATE INDEX IF NOT EXISTS ` + idx + ` ON ` + t + ` (claimed_at)`,
		// CREATE INDEX IF NOT EXISTS takes its lock on the table before it
		// looks: Migrate asks the catalogue first, so that a replica that
		// starts under load does not hold the others' claims back.
		hasIndex: `SELECT EXISTS (SELECT 1 FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
    WHERE i.indrelid = $1::regclass AND c.relname = $2)`,
		indexName: parts[len(parts)-1] + indexSuffix,

		// A table of an earlier release has no claimed_at, and an index
		// on expires_at, which every completion changed (no HOT update).
		// Its rows get the earliest claim time their expiry allows ($1:
		// the retention), so that Purge finds them in claimed_at order.
		hasClaimedAt: `SELECT EXISTS (SELECT 1 FROM pg_attribute
    WHERE attrelid = $1::regclass AND attname = 'claimed_at' AND NOT attisdropped)`,
		upgrade: []string{
			`ALTER TABLE ` + t + ` ADD COLUMN claimed_at timestamptz`,
			`UPDATE ` + t + ` SET claimed_at = expires_at - $1::bigint * interval '1 microsecond'`,
			`ALTER TABLE ` + t + ` ALTER COLUMN claimed_at SET DEFAULT now(), ALTER COLUMN claimed_at SET NOT NULL, SET (fillfactor = 90)`,
		},
		dropOldIndex: `DROP INDEX IF EXISTS ` + oldIdx.Sanitize(),

		// A narrow completion, as 0.2's Transactional wrote it, has state,
		// token and expires_at NULL and reads as done (see expiry;
		// TestMigrateAllowsNarrowRows). A table of an earlier release has them
		// NOT NULL; dropping that is a change of the catalogue alone, made
		// only when needed, since ALTER TABLE waits for every transaction
		// on the table.
		hasNotNull: `SELECT coalesce(bool_or(attnotnull), false) FROM pg_attribute
    WHERE attrelid = $1::regclass AND attname IN ('state', 'token', 'expires_at') AND NOT attisdropped`,
		dropNotNull: `ALTER TABLE ` + t + ` ALTER COLUMN state DROP NOT NULL,
    ALTER COLUMN token DROP NOT NULL, ALTER COLUMN expires_at DROP NOT NULL`,

		// One statement: take the id when it is new, or when its row is a
		// lapsed claim or an expired completion; otherwise say why not.
		// The row is read first (cur), and the INSERT is attempted only
		// when it is absent or lapsed: a duplicate of a done event (the
		// common case) locks nothing, writes no WAL and waits for no
		// flush. ON CONFLICT ... DO UPDATE locks the row even when its
		// WHERE is false, so it must not run for a live row. cur reads the
		// statement's snapshot, so it shows the row as it was before a
		// concurrent claim took it: a row expired there was taken over,
		// hence "in progress". A row inserted concurrently after the
		// snapshot gives no result at all, and the caller runs the
		// statement again. $4 is the new row's state: 'processing' for a
		// claim, 'done' for a claim inside the function's transaction
		// (ClaimAndRun), where the row lock is the lease. $5 is the
		// retention (µs), for rows that say it by their claim time alone.
		claim: `WITH cur AS (
    SELECT coalesce(e.state, 'done') AS state, ` + expiry("e", "$5") + ` > now() AS live
    FROM ` + t + ` AS e WHERE e.event_id = $1
), claimed AS (
    INSERT INTO ` + t + ` AS e (event_id, state, token, expires_at, claimed_at)
    SELECT $1, $4, $2, now() + ` + micros + `, now()
    WHERE NOT EXISTS (SELECT 1 FROM cur WHERE live)
    ON CONFLICT (event_id) DO UPDATE
        SET state = excluded.state, token = excluded.token, expires_at = excluded.expires_at, claimed_at = excluded.claimed_at
        WHERE ` + expiry("e", "$5") + ` <= now()
    RETURNING 'acquired'::text AS status
)
SELECT status FROM claimed
UNION ALL
SELECT CASE WHEN cur.state = 'done' AND cur.live THEN 'done' ELSE 'in progress' END
FROM cur WHERE NOT EXISTS (SELECT 1 FROM claimed)`,

		// Extend the claim while its token holds the row unsettled;
		// otherwise say whether the token completed it ("done").
		renew: `WITH renewed AS (
    UPDATE ` + t + ` SET expires_at = now() + ` + micros + `
    WHERE event_id = $1 AND token = $2 AND state = 'processing'
    RETURNING 'renewed'::text AS status
)
SELECT status FROM renewed
UNION ALL
SELECT e.state FROM ` + t + ` AS e
WHERE e.event_id = $1 AND e.token = $2 AND NOT EXISTS (SELECT 1 FROM renewed)`,

		state: `SELECT state FROM ` + t + ` WHERE event_id = $1 AND token = $2`,

		// Record the event done: the row when it is this token's claim,
		// or anyone's lapsed claim or expired completion ($3, the
		// retention, also dates a narrow row). Done with this
		// token already (Transactional marked it inside the EventFunc's
		// transaction) counts as success, and costs no write.
		complete: `WITH completed AS (
    UPDATE ` + t + ` AS e SET state = 'done', token = $2, expires_at = now() + ` + micros + `
    WHERE e.event_id = $1 AND ((e.token = $2 AND e.state = 'processing') OR ` + expiry("e", "$3") + ` <= now())
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM completed)
    OR EXISTS (SELECT 1 FROM ` + t + ` WHERE event_id = $1 AND token = $2 AND state = 'done')`,

		// When complete found nothing: the row is gone (purged), or
		// another claim holds it. Write the completion only in the first
		// case.
		insertDone: `INSERT INTO ` + t + ` (event_id, state, token, expires_at)
VALUES ($1, 'done', $2, now() + ` + micros + `)
ON CONFLICT (event_id) DO NOTHING`,

		markDone: `UPDATE ` + t + ` SET state = 'done', expires_at = now() + ` + micros + `
WHERE event_id = $1 AND token = $2 AND state = 'processing'`,

		release: `DELETE FROM ` + t + ` WHERE event_id = $1 AND token = $2 AND state = 'processing'`,

		// The only index besides the key is on claimed_at, which no
		// completion or renewal changes (they are HOT updates). A row
		// expires at the earliest a retention ($2) after its claim (a
		// completion expires a retention after it was recorded, a claim a
		// lease after it was made or renewed): the expired rows are among
		// those claimed a retention ago, oldest first. A lapsed claim that
		// nobody took over is purged a retention after it was made, and a
		// narrow completion a retention after its claim. Rows
		// locked by a claim or a transaction in flight are skipped, never
		// waited for.
		purge: `DELETE FROM ` + t + ` WHERE event_id IN (
    SELECT event_id FROM ` + t + `
    WHERE claimed_at <= now() - $2::bigint * interval '1 microsecond' AND (expires_at IS NULL OR expires_at <= now())
    ORDER BY claimed_at LIMIT $1 FOR UPDATE SKIP LOCKED
)`,
	}
}

// expiry is when the row alias e expires: its expires_at, or, for a row in
// the narrow form (a completion written in a Transactional function's
// transaction, expires_at NULL), a retention (the µs parameter retention)
// after its claim.
func expiry(e, retention string) string {
	return "coalesce(" + e + ".expires_at, " + e + ".claimed_at + " + retention + "::bigint * interval '1 microsecond')"
}
