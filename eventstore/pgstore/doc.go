// Package pgstore is a webhook.Store in PostgreSQL, for webhook
// receivers that run on several replicas: every replica's
// webhook.Handler claims each event id in one shared table, so that
// each event is processed once however many times, and to whichever
// replica, the service delivers it. It uses pgx v5 (a *pgxpool.Pool).
//
//	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
//	...
//	store, err := pgstore.New(pool)
//	...
//	err = store.Migrate(ctx) // or apply the SQL below by hand
//	...
//	h := webhook.NewHandler(verifier, store.Transactional(markPaid),
//		webhook.WithStore(store))
//
// # The table
//
// Migrate creates the table and its index when they are missing; it is
// idempotent and safe to run from every replica at once. A DBA who applies
// migrations by hand runs the same statements (Store.MigrationSQL returns
// them for another table name):
//
//	CREATE TABLE IF NOT EXISTS "payments_webhook_events" (
//	    event_id   text        PRIMARY KEY,
//	    state      text        NOT NULL CHECK (state IN ('processing', 'done')),
//	    token      text        NOT NULL,
//	    expires_at timestamptz NOT NULL
//	);
//	CREATE INDEX IF NOT EXISTS "payments_webhook_events_expires_at_idx" ON "payments_webhook_events" (expires_at);
//
// The role the store connects as needs SELECT, INSERT, UPDATE and DELETE on
// the table, and CREATE on its schema to run Migrate (PostgreSQL checks it
// even when the table exists): a role without it leaves Migrate to a DBA.
//
// A row is a claim (state 'processing', expires_at = the end of its lease)
// or a completion (state 'done', expires_at = when the id may be forgotten).
// Claim is one INSERT ... ON CONFLICT (event_id) DO UPDATE statement that
// takes the id only when it is new, or its row is a lapsed claim or an
// expired completion; it tells "in progress" from "done" otherwise. Each
// claim carries a random token: Renew (UPDATE of expires_at) and Release
// (DELETE) act only on the row that still holds the caller's token, and
// return webhook.ErrClaimLost otherwise, so a replica whose lease ran out
// never settles the claim another replica took over. Complete (an UPDATE
// to 'done', then an INSERT when the row is gone) records the event unless
// another claim holds the row within its lease or completed it: a late
// completion of a lapsed claim nobody took over still lands.
//
// # Event ids
//
// Any event id can be stored. An id of at most 256 bytes of valid UTF-8
// without a NUL byte is the row's event_id as it is; any other (a NUL, invalid
// UTF-8, or a long id that would not fit in the primary key's btree) is stored
// as "sha256:" and the hex SHA-256 of its bytes, and so is an id that starts
// with "sha256:", so that the two kinds never meet (TestOddEventIDsAreStorable,
// TestOddEventIDsThroughTheHandler). Error messages quote at most 64 bytes of
// an id.
//
// # Time
//
// Every lease and expiry is compared with the database's now(), never with
// a replica's clock, so replicas whose clocks disagree still agree on who
// owns an event. The claim's LeaseExpires, which the handler's renewals and
// cancellation run on, is read on the replica's monotonic clock before the
// statement is sent: it always comes before the database's lease ends.
//
// Defaults: a lease of DefaultLease (5 seconds), which the handler renews
// every third of it while the function runs: a function may run longer, and
// a replica that dies stops renewing, so its claim lapses while the service
// still retries (keep the lease a third or less of the service's retry
// span); a deadline of DefaultTimeout (2 seconds) on every statement
// (WithTimeout), since pgx has none of its own; and a retention of
// DefaultRetention (7 days; never less than MinRetention, twice the
// signature tolerance).
//
// A frozen database (a hung host: connections open, nothing answers) gets a
// delivery that arrives while it is frozen a 503 within one WithTimeout (2 s),
// and one it froze under after its claim an answer within three (6 s), never a
// hang: with Transactional, beginning the transaction is one of the store's
// bounded statements (TestFrozenDatabase).
//
// # Exactly-once effects
//
// With the handler alone, an event's effects happen at least once and
// normally once: when the database becomes unreachable after your function
// succeeded, the handler keeps the claim and retries the record until it
// lands, but a replica killed between your function's effects and the
// record, or cut off from the database for longer than its lease, or a
// function that carries on past its cancelled context, leaves the event to
// a later delivery, which runs the function again. Transactional closes
// that gap for writes to the same database: your function runs in a
// transaction that also marks the event done, so its writes commit exactly
// once, or not at all.
//
// # Purging
//
// Expired rows are deleted by Purge, and opportunistically after every
// DefaultPurgeEvery-th acquired claim (WithPurgeEvery), a batch of at most
// PurgeBatch rows in the claiming goroutine; the store starts no goroutine.
// With WithPurgeEvery(0), call Purge from a schedule of yours. A row that
// was not purged yet is harmless: Claim treats it as absent.
package pgstore
