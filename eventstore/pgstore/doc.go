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
// Migrate creates the table and its index when they are missing, and
// upgrades the table of an earlier release (see Store.Migrate); it is
// idempotent and safe to run from every replica at once. A DBA who applies
// migrations by hand runs the same statements (Store.MigrationSQL returns
// them for another table name):
//
//	CREATE TABLE IF NOT EXISTS "payments_webhook_events" (
//	    event_id   text        PRIMARY KEY,
//	    state      text        CHECK (state IN ('processing', 'done')),
//	    token      text,
//	    expires_at timestamptz,
//	    claimed_at timestamptz NOT NULL DEFAULT now()
//	) WITH (fillfactor = 90);
//	CREATE INDEX IF NOT EXISTS "payments_webhook_events_claimed_at_idx" ON "payments_webhook_events" (claimed_at);
//
// The store needs PostgreSQL 12 or later (tcp_user_timeout). The role it
// connects as needs SELECT, INSERT, UPDATE and DELETE on the table, and
// CREATE on its schema to run Migrate (PostgreSQL checks it even when the
// table exists): a role without it leaves Migrate to a DBA.
//
// A row is a claim (state 'processing', expires_at = the end of its lease)
// or a completion (state 'done', expires_at = when the id may be forgotten);
// claimed_at is when it was claimed. A completion written inside a
// Transactional function's transaction is narrow: state, token and
// expires_at are NULL, and it is forgotten a retention after claimed_at
// (16 bytes less per row than the same completion spelled out:
// TestTransactionalWritesNarrowRows). Claim is one statement that reads the
// row first, and only when it is absent, a lapsed claim or an expired
// completion takes it with INSERT ... ON CONFLICT (event_id) DO UPDATE; it
// tells "in progress" from "done" otherwise. A duplicate of a done event so
// writes nothing: no WAL, no commit to wait for (TestWALPerDelivery). Each
// claim carries a random token: Renew (UPDATE of expires_at) and Release
// (DELETE) act only on the row that still holds the caller's token, and
// return webhook.ErrClaimLost otherwise, so a replica whose lease ran out
// never settles the claim another replica took over. Complete (an UPDATE
// to 'done', then an INSERT when the row is gone) records the event unless
// another claim holds the row within its lease or completed it: a late
// completion of a lapsed claim nobody took over still lands. The only index
// besides the key is on claimed_at, which neither Renew nor Complete
// changes, and the fillfactor leaves room on each page: both are HOT updates
// (TestWALPerDelivery counts them).
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
// In the default mode, a claim rides out a restart of the database shorter
// than what is left of its lease: the handler's renewals fail while it is
// down and succeed on new connections once it is back, and the function is
// not cancelled (TestLeaseRidesOutARestart). A lease that is lost or runs
// out is logged by the handler with the event id.
//
// A frozen database (a hung host: connections open, nothing answers) gets a
// delivery that arrives while it is frozen a 503 within one WithTimeout
// (2 s). One it froze under is answered within WithLease/3 + 2 WithTimeout
// (5.7 s), never later and never with a 500: 200 in the default mode (the
// function ran; its completion is retried in the background), 503 with
// Transactional (its transaction rolled back) (TestFrozenDatabase, which
// allows 1.5 s and 2 s more for a loaded machine).
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
// transaction that also records the event done, so its writes commit exactly
// once, or not at all.
//
// # The lease of Transactional
//
// Once Transactional was called on a Store, a handler with that Store
// (webhook.WithStore; the handler detects webhook.TxStore) claims each event
// inside the function's transaction (Store.ClaimAndRun): it reads the event's
// row (a done event is a duplicate, with no write), then, in one round trip,
// begins a transaction, sets its bounds and inserts the row as done (or,
// when the row exists, takes over a lapsed or expired one), runs your
// function, and commits: one commit per event, and nothing durable before or
// after (TestWALPerDelivery). There is no lease to renew: the row lock is the
// lease while the transaction is open. Your function gets the transaction as
// a pgx.Tx of the store's: tx.Begin makes a savepoint, and tx.Commit and
// tx.Rollback return an error (TestTransactionalTxIsATransaction,
// TestTransactionalTxRefusesCommit); a transaction that a failed statement
// broke is not recorded done, even when your function returns nil
// (TestTransactionalBrokenTxIsNotDone).
//
//   - A concurrent delivery of the same event waits for the lock for the
//     handler's claim wait (WithClaimWait, 2 s by default: lock_timeout),
//     then answers 409, or 200 as a duplicate if the first committed
//     meanwhile; it never runs the function beside the first
//     (TestTransactionalConcurrentDuplicateWaitsForTheLock,
//     TestTransactionalConcurrentDuplicatesNeverOverlap).
//   - A holder that dies loses the lock when PostgreSQL ends its session: at
//     once when its process died (the connection closes); within the lease
//     (WithLease, 5 s) when it stays silent in its transaction
//     (idle_in_transaction_session_timeout, set for the transaction). The
//     next delivery then processes the event, and the cut-off holder's
//     delivery gets 503 (TestTransactionalPartitionedHolderLosesTheLock).
//     The transaction also sets tcp_user_timeout to the lease, for a server
//     blocked sending to a host that stopped acknowledging; no test
//     reproduces that case.
//   - So your function must not leave its transaction idle (no statement in
//     flight) for the lease: make a slow call to another service before the
//     transaction, or raise WithLease. The store cancels the context of a
//     function idle in its transaction for the lease minus a margin (a
//     fifth of it: 4 s by default), before the server ends the transaction
//     and another delivery can take the event: nothing commits, the
//     delivery gets 503, the next one runs it again, and a function that
//     honours its context never runs beside it
//     (TestTransactionalIdleFunctionIsStopped,
//     TestTransactionalIdleFunctionLosesItsLock). A function that keeps
//     statements going may run for longer than the lease
//     (TestTransactionalSlowFunctionKeepsItsClaim).
//   - From a third of the lease on, while your function runs, the store
//     pings the database on another connection every third of the lease; a
//     ping that fails within WithTimeout cancels your function's context (a
//     frozen or unreachable database), the transaction rolls back, and the
//     delivery gets 503 (TestFrozenDatabase).
//   - A restart of the database (or a cut connection) under your function
//     ends its transaction: nothing commits, the delivery gets 503, and the
//     next one runs it again (TestTransactionalRestartUnderTheFunction).
//   - Reconcile, and a handler whose store wraps this one, keep the usual
//     path: a committed claim, then the transaction marks it done. The two
//     paths exclude each other: a delivery that finds a live claim of the
//     usual path takes the usual path, and waits for it as the handler's
//     claim wait says; one of the usual path waits on the other's row lock
//     within WithTimeout. A plain EventFunc given a handler with such a Store runs under
//     the row lock too (at least once, as in the default mode).
//
// # Purging
//
// Expired rows are deleted by Purge, and opportunistically after every
// DefaultPurgeEvery-th acquired claim (WithPurgeEvery), a batch of at most
// PurgeBatch rows in the claiming goroutine; the store starts no goroutine
// but the timer of a Transactional function's pings. With
// WithPurgeEvery(0), call Purge from a schedule of yours. A row that was
// not purged yet is harmless: Claim treats it as absent. Purge walks the
// claimed_at index from the oldest claim: a completion expires a retention
// after it was recorded, so every expired completion was claimed a
// retention ago; a lapsed claim nobody took over is purged a retention
// after its claim.
package pgstore
