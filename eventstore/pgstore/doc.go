// Package pgstore receives the Payments API's webhooks on PostgreSQL, for
// receivers that run on several replicas. It uses pgx v5 (a *pgxpool.Pool)
// and, for the Queue, River (github.com/riverqueue/river), which needs Go
// 1.26.
//
// Two ways, from the recommended one:
//
//   - Queue: the handler verifies a delivery, records the event once
//     (unique by event id) with its River job in one transaction, and
//     answers 200 at once; River workers, in any number of processes, run
//     your function with a real pgx.Tx in the transaction that completes
//     the job, so its writes happen exactly once however long it takes. A
//     failing function is retried by River with back-off, a dead worker's
//     job is rescued, and the outcome tracker's row rides the same
//     transaction. See Queue.
//
//   - ClaimStore: a webhook.ClaimStore that claims each event id in one shared table,
//     so that the handler runs your function once, during the delivery, at
//     least once when things fail (see "Exactly-once effects" below).
//
//     pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
//     ...
//     queue, err := pgstore.NewQueue(pool, markPaid, nil)
//     ...
//     err = queue.Migrate(ctx) // River's tables and the queue's
//     err = queue.Start(context.WithoutCancel(ctx)) // in every process that works; Stop on shutdown
//     ...
//     h := webhook.NewQueueHandler(verifier, queue.Enqueue)
//
// A program that already runs River gives the Queue its own client
// instead: w, err := NewWorker(pool, markPaid, nil); river.AddWorker(workers,
// w) with the client's other workers; then q, err := w.Queue(client), whose
// client lists QueueName in its Queues and sets RescueStuckJobsAfter to
// minutes (DefaultRescueAfter), not River's hour.
//
// # The Queue
//
// Enqueue is River's transactional enqueue, in one transaction: INSERT
// the event's id and body into the queue's table (DefaultQueueTable) ON
// CONFLICT DO NOTHING; only when it is new, insert its River job with
// InsertTx (EventArgs: the event's id alone, so River's table and River
// UI hold no personal data: TestQueueJobHoldsOnlyTheEventID); commit. A duplicate (a concurrent or late
// delivery, a reconcile, a redelivery) finds the id and writes nothing:
// no WAL, no job (TestWALPerDelivery). The uniqueness window is the
// retention (QueueConfig.Retention, DefaultRetention, 7 days, never less
// than MinRetention: twice the signature tolerance); an hourly River
// periodic job (an EventArgs with Purge set, on the client that works
// QueueName) forgets older ids whose function committed, and those whose
// job River no longer keeps, asked through River's JobList (every event
// job but the completed ones): an event whose job is failing or discarded
// keeps its body while River keeps the job, so River UI can still retry it
// (TestQueuePurgeKeepsUnfinishedEvents,
// TestQueuePurgeAsksRiverWhichEventsAreUnfinished). No statement of the
// package names River's tables.
//
// A worker (Worker, River's executor) takes the job and, in one
// transaction: reads the event's body, locking its row, in one round trip
// with the function's SAVEPOINT (a second job of the event waits for the
// first to end, then finds no body and runs nothing:
// TestQueueSecondJobOfAnEventWaitsForTheFirst); calls your
// function in that savepoint, with a pgx.Tx that refuses every call with
// pgx.ErrTxClosed from the moment the worker sees the function return (a
// call still running then fails the attempt; one a goroutine of yours
// starts and ends in the instant of the return cannot be told from one
// before it: wait for your goroutines before you return;
// TestQueueTxIsRefusedTheMomentTheFunctionReturns,
// TestQueueTxIsClosedAfterTheFunction); if your function returned nil
// after one of its statements failed, leaving the transaction aborted (the
// connection's status says so, no statement needed), fails the attempt
// with an error naming that statement (TestQueueSwallowedFailureIsNamed); records
// the event in the outcome table (OutcomeStore.ApplyTx: an event the
// tracker cannot record, such as one with a reference of 256 characters,
// is a warning of QueueConfig.Logger, never a failed job:
// TestQueueReferencesInAnyScript); completes the job
// with river.JobCompleteTx and checks that the row it returns shows this
// very attempt completed (the fence: a function that returns after its
// job was rescued commits nothing, ErrJobRescued:
// TestQueueRescuedAttemptCommitsNothing); clears the body (last: a
// duplicate delivery's INSERT would wait for the commit of a transaction
// that updated the row, TestQueueAnswersBeforeTheFunctionRuns); and
// commits. A
// completed job retried by hand finds no body and is cancelled without
// running your function (TestQueueCompletedJobRetriedRunsNothing). After
// the commit of a final outcome the worker NOTIFYs the outcome table's
// channel, so Await in any process wakes at once
// (TestQueueAwaitWokenByNotifyAfterCommit; with one NOTIFY in flight per
// process at most: workers that commit while it is in flight wait for it,
// then one of them sends one more, TestQueueNotifiesAfterEveryCommit), never before the function's
// writes are visible (TestQueueAwaitNeverBeforeTheFunctionCommitted). An
// error of your function rolls all of it back, and River runs the event
// again after a back-off (TestQueueRetriesAFailingFunction); each event
// runs exactly once to a commit (TestQueueProcessesEachEventOnce). The
// answer to the service never waits for your function
// (TestQueueAnswersBeforeTheFunctionRuns).
//
// A frozen database (a hung host: connections open, nothing answers) costs
// every delivery, in flight when it froze or arriving after, a 503 within
// QueueConfig.Timeout (2 s): the timeout covers the wait for a pool
// connection as well as each statement, and pgx ends a statement at its
// deadline by closing the connection. This holds with the pool's default
// size and more deliveries in flight than it has connections, workers
// running on the same pool; after the thaw the service's redeliveries get
// 200 and each event is processed once (TestQueueFrozenDatabase, which
// allows 2 s more for a loaded machine). A restart of the database under
// running jobs rolls their transactions back and River runs them again:
// each event is processed once (TestQueueRestartedDatabase).
//
// River cancels your function's context after QueueConfig.JobTimeout (30
// s by default) and rescues a job still running after RescueAfter (1
// minute; River's rescuer looks every 30 s), so a killed worker's events
// run again within two minutes (the fault matrix's killed-worker row,
// TestQueueFaultMatrix). A job that failed MaxAttempts times is discarded
// and stays in River's table: River UI or the river CLI shows it with its
// errors and can retry it.
//
// # One delivery's path
//
// A delivery on the recommended path (NewQueue with its defaults behind
// webhook.NewQueueHandler), from the HTTP request to the commit of your
// function's transaction, runs code in these 8 files of the project, none
// of them claim or lease code (TestDeliveryPathFiles reads them from a
// run):
//
//   - webhook/serve.go: reads the delivery, calls Enqueue and answers
//   - webhook/signature.go: verifies the delivery's signature
//   - events.go: parses the event, in the handler and in the worker
//   - envelope.go: reads the event's id and kind as the service sends them
//   - eventstore/pgstore/queue.go: Enqueue; the worker's transaction, your
//     function on its gated pgx.Tx, the fence and the commit
//   - eventstore/pgstore/outcome.go: records the event's outcome in that
//     transaction (OutcomeStore.ApplyTx)
//   - outcome/outcome.go: decides the outcome
//   - internal/textrule/textrule.go: the reference rule the SDK shares
//
// A function of yours that decodes its event (ev.Payment) adds the files
// of that decoding.
//
// # The table
//
// Migrate creates the table and its index when they are missing, and
// upgrades the table of an earlier release (see ClaimStore.Migrate); it is
// idempotent and safe to run from every replica at once. A DBA who applies
// migrations by hand runs the same statements (ClaimStore.MigrationSQL returns
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
// claimed_at is when it was claimed. A narrow row (state, token and
// expires_at NULL), which 0.2's Transactional wrote, is a completion
// forgotten a retention after claimed_at (TestMigrateAllowsNarrowRows).
// Claim is one statement that reads the
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
// (5.7 s), never later and never with a 500: 200 (the function ran; its
// completion is retried in the background) (TestFrozenDatabase, which
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
// a later delivery, which runs the function again. The Queue closes that
// gap for writes to the same database: your function runs in a transaction
// that also completes its job, so its writes commit exactly once, or not at
// all.
//
// # Purging
//
// Expired rows are deleted by Purge, and opportunistically after every
// DefaultPurgeEvery-th acquired claim (WithPurgeEvery), a batch of at most
// PurgeBatch rows in the claiming goroutine; the store starts no
// goroutine. With
// WithPurgeEvery(0), call Purge from a schedule of yours. A row that was
// not purged yet is harmless: Claim treats it as absent. Purge walks the
// claimed_at index from the oldest claim: a completion expires a retention
// after it was recorded, so every expired completion was claimed a
// retention ago; a lapsed claim nobody took over is purged a retention
// after its claim.
package pgstore
