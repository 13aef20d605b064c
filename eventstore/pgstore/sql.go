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
// index name, which is the table name plus indexSuffix.
const (
	indexSuffix  = "_expires_at_idx"
	maxTablePart = 63 - len(indexSuffix)
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
	claim, renew, state      string
	complete, insertDone     string
	markDone                 string
	release, purge           string
}

func buildQueries(table string) queries {
	parts := strings.Split(table, ".")
	t := pgx.Identifier(parts).Sanitize()
	idx := pgx.Identifier{parts[len(parts)-1] + indexSuffix}.Sanitize()
	const micros = "$3::bigint * interval '1 microsecond'"
	return queries{
		createTable: `CREATE TABLE IF NOT EXISTS ` + t + ` (
    event_id   text        PRIMARY KEY,
    state      text        NOT NULL CHECK (state IN ('processing', 'done')),
    token      text        NOT NULL,
    expires_at timestamptz NOT NULL
)`,
		createIndex: `CREATE INDEX IF NOT EXISTS ` + idx + ` ON ` + t + ` (expires_at)`,

		// One statement: take the id when it is new, or when its row is a
		// lapsed claim or an expired completion; otherwise say why not.
		// The second SELECT reads the statement's snapshot, so it sees
		// the row as it was before a concurrent claim took it: a row
		// expired there was taken over, hence "in progress". A row
		// inserted concurrently after the snapshot gives no result at
		// all, and the caller runs the statement again.
		claim: `WITH claimed AS (
    INSERT INTO ` + t + ` AS e (event_id, state, token, expires_at)
    VALUES ($1, 'processing', $2, now() + ` + micros + `)
    ON CONFLICT (event_id) DO UPDATE
        SET state = 'processing', token = excluded.token, expires_at = excluded.expires_at
        WHERE e.expires_at <= now()
    RETURNING 'acquired'::text AS status
)
SELECT status FROM claimed
UNION ALL
SELECT CASE WHEN e.state = 'done' AND e.expires_at > now() THEN 'done' ELSE 'in progress' END
FROM ` + t + ` AS e
WHERE e.event_id = $1 AND NOT EXISTS (SELECT 1 FROM claimed)`,

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
		// or anyone's lapsed claim or expired completion. Done with this
		// token already (Transactional marked it inside the EventFunc's
		// transaction) counts as success, and costs no write.
		complete: `WITH completed AS (
    UPDATE ` + t + ` AS e SET state = 'done', token = $2, expires_at = now() + ` + micros + `
    WHERE e.event_id = $1 AND ((e.token = $2 AND e.state = 'processing') OR e.expires_at <= now())
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

		// Rows locked by a claim or a transaction in flight are skipped,
		// never waited for.
		purge: `DELETE FROM ` + t + ` WHERE event_id IN (
    SELECT event_id FROM ` + t + ` WHERE expires_at <= now()
    ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
)`,
	}
}
