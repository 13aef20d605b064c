// Package paymentstest runs an in-process, stateful fake of the Payments
// API, as net/http/httptest runs an HTTP server: for testing code that uses
// the SDK, and for trying the SDK without an API key.
//
//	srv := paymentstest.NewServer()
//	defer srv.Close()
//	client := srv.Client() // or payments.NewClient(srv.APIKey(), payments.WithBaseURL(srv.URL()))
//	r, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{...})
//	...
//	if n := len(srv.PaymentsByReference("order-1")); n != 1 { t.Fatalf("%d payments", n) }
//
// The server listens on a loopback port and speaks real HTTP, so everything
// between your code and the wire (retries, idempotency keys, timeouts,
// decoding) is exercised. It implements every operation of the
// specification plus confirm, with the decisions of the SDK's design notes:
//
//   - Authentication: "Authorization: Bearer <APIKey()>"; otherwise 401 with
//     code "unauthorized".
//   - Every answer is the envelope {success, message, stan, data}; errors carry
//     code and, for bad fields, errors: [{field, message}]. Malformed JSON is
//     400 "invalid_json", bad fields 422 "validation_failed", unknown ids 404
//     "not_found", unknown paths 404, wrong methods 405.
//   - Recipients are stored and updated (201 on create, 200 on update).
//     Creating one emits recipient.created then recipient.verified; an
//     update that changes account_number verifies it again. An
//     account_number is 8 to 17 digits (the specification is silent; see
//     the README's Assumptions); "1" or "abc" is 422 naming it.
//   - Initiate creates a pending payment with a quote: fee 1.5% of the
//     amount rounded half up to 2 places (at least 0.01), the exchange rate
//     from the payment's currency to the recipient's (1 when they match; a
//     built-in table otherwise), total = amount + fee,
//     expiry 5 minutes after creation on the server's clock (see Advance). A
//     reference already used by a payment that is not an expired, unconfirmed
//     quote is refused with 422 "duplicate_reference".
//   - Confirm (POST /payments/confirm {"reference", "quote_id"}) executes the
//     payment: status "completed" (is_completed true) and payment.completed,
//     or status "rejected" and payment.rejected when the amount converted to
//     the recipient's currency exceeds the recipient's limit. An expired quote
//     gives 422 "quote_expired", an executed one 422
//     "quote_already_confirmed", an unknown one 404. A payment paid out
//     draws its total_amount from the merchant's balance in its currency
//     (see Test values).
//   - Virtual accounts get unique random 10-digit account numbers (200);
//     SimulateIncomingPayment plays a customer paying into one, which adds
//     to the merchant's balance.
//   - Idempotency-Key, on any request: the same key and body replay the
//     first answer byte for byte (same status and stan, plus the header
//     Idempotent-Replayed: true); the same key with another body gives 422
//     "idempotency_key_reused"; while the first request runs, 409
//     "idempotency_in_progress". Keys are scoped to API key, method and
//     path, and kept 24 hours of server time.
//   - Webhooks (WithWebhook; the admin API's PUT /_sandbox/webhook-url at
//     run time): every event is POSTed as {"id", "event", "created_at",
//     "data"}, signed with webhook.SignPayload in the Payments-Signature
//     header, one event at a time in order, and retried 4 times after a
//     failed attempt, waiting 1s, 2s, 4s, 8s (Webhook.Retries sets any
//     schedule, or none). Deliveries and Events are logs to assert on;
//     WaitForDeliveries waits for the queue to drain. The admin API sends
//     one event again (the same body, so the same id), or every event whose
//     deliveries all failed: an outage of a receiver, replayed.
//   - Listing events: GET /webhooks/events, the SDK's assumption of the
//     operation the specification names without showing it, lists the
//     event log (every event, live or triggered, delivered or not), oldest
//     first. Query: after (an event id: the events created after it), since
//     (RFC 3339, inclusive, on created_at as sent, to the millisecond), type
//     (repeatable; one of the specification's kinds) and limit (1 to 100,
//     default 50). data is {"events": [webhook bodies, byte for byte],
//     "has_more"}; the next page is after=<the last id>. Bad or unknown
//     parameters are 422 "validation_failed" naming each; an after that is
//     not in the log (never, or no longer: see Sandbox.LogLimit) is 400
//     "unknown_cursor" (payments.CodeUnknownEventCursor), so that a lost checkpoint is
//     never taken for "nothing new".
//   - Standard Webhooks: WithWebhook(Webhook{Scheme: SchemeStandard}) signs with
//     webhook.SignStandard instead: headers webhook-id (the event's id, the
//     same on every retry of it), webhook-timestamp and webhook-signature,
//     with whsec_ secrets (webhook.NewStandardSecret makes one). A receiver
//     verifies with webhook.NewStandardVerifier, and
//     webhook.NewHandler then dedupes on webhook-id.
//   - Two clocks. The server's clock (Now, Advance) is business
//     time: quote expiry, created_at and the other timestamps it sends, and
//     the times in its logs. A webhook signature's t is the wall-clock time
//     of sending, as the real service's is, so a receiver verifying on real
//     time accepts every delivery however far Advance has moved the server.
//   - Test events: POST /webhooks/events/trigger/{event_id} sends an event of
//     that kind with a made-up resource that the server does not store. So
//     that a receiver can tell it from a real one, its resource carries a
//     reference starting with "test_trigger_" (webhook.Triggered checks
//     it; the member is added to resources that have none),
//     and its ids (id, recipient_id, quote_id, virtual_account_id) are UUIDs
//     starting with "00000000-0000-4000-8000-". No other event carries
//     either: initiate refuses a reference with that prefix (422 naming
//     reference), and the server never makes such an id.
//   - Faults: InjectFault breaks chosen requests (an error status, a
//     connection dropped before or after the work, or a delay), the next
//     few or, with a Rate and a Seed, a random share of them for chaos
//     tests; ClearFaults ends them.
//
// # Test values
//
// Like a card processor's test card numbers, these values make the fake
// fail, or succeed late, the way the real service can, so that a
// merchant's failure handling runs end to end. Any other value behaves as
// described above.
//
//	Value                     Constant                        What happens
//	account 4000000002        AccountNumberFailsVerification  recipient.created, then recipient.verification_failed;
//	                                                          initiate to it: 422 "recipient_verification_failed"
//	account 4000000005        AccountNumberVerifiesLate       recipient.created; recipient.verified after the processing
//	                                                          delay; initiate before that: 422 "recipient_not_verified"
//	amount 4000.02            AmountFails                     confirm: 200, status "failed", payment.failed
//	amount 4000.03            AmountRejected                  confirm: 200, status "rejected", payment.rejected (as for an
//	                                                          amount above the recipient's limit)
//	amount 4000.05            AmountCompletesLate             confirm: 200, status "pending"; payment.completed after the
//	                                                          processing delay
//	balance 1000000000000.00  (default)                       each currency's balance at start (WithBalance); confirm draws
//	                                                          total_amount from it, or is 422 "insufficient_balance"
//	threshold 10000.00        (default)                       account.balance_low when a payment leaves a currency's
//	                                                          balance below it (Sandbox.BalanceLowThreshold)
//	any amount                SimulateIncomingPayment         virtual_account.payment_received; adds to the balance
//
// Amounts match in any currency and however written ("4000.020" is
// AmountFails). Nothing is drawn for a payment that fails or is rejected. The
// processing delay is 2 seconds on the wall clock,
// or Sandbox.ProcessingDelay; WaitForDeliveries waits for it. account.balance_low
// goes once per currency, and again only after an incoming payment has
// brought the balance back to the threshold; its data is {"merchant_id",
// "currency", "balance", "threshold", "created_at"}. Balance reads a
// balance. payments-sandbox takes -balance, -balance-low-threshold and
// -processing-delay.
//
// Reads such as Payments, Recipient and Requests let a test check the
// server's side, for example that a retried payment exists exactly once.
// The logs (Requests, Events, Deliveries) keep their last 10,000 entries
// each, the oldest going first; Sandbox.LogLimit sets another size, for a
// long test that reads its whole history.
//
// The server's http.Server bounds only the time to read request headers (10
// seconds); the timeouts of Sandbox add read, write and idle timeouts for a
// server that others reach, as payments-sandbox does.
//
// The package imports only the SDK's public API, never its internals, so a
// bug in the client cannot be hidden by shared code. The payments-sandbox
// command runs the same fake as a standalone server.
//
// # Admin API
//
// WithSandbox (on in payments-sandbox, off by default) turns on the admin
// API: code outside Go, and a Go test, change the running server over HTTP. Its routes live
// under /_sandbox/, take the same bearer key (401 otherwise) and answer the
// same envelope, with the result in data. They are never faulted or slowed
// down, ignore Idempotency-Key and are not in Requests. Bodies are JSON
// objects (the Content-Type is not checked); malformed JSON is 400, and
// unknown members or bad values 422 naming the field. Numbers may also be
// sent as strings; amounts keep their exact digits.
//
//	GET    /_sandbox/clock                 data {"now"}
//	POST   /_sandbox/clock/advance         {"seconds": 301} or {"duration": "5m1s"}: Advance; data {"now"}
//	POST   /_sandbox/virtual-accounts/{account_number}/incoming-payments
//	                                       {"amount": 5000.00, "currency": "NGN"} (currency optional):
//	                                       SimulateIncomingPayment; data is the event's payment
//	GET    /_sandbox/faults                data {"pending", "injected"}
//	POST   /_sandbox/faults                {"kind": "status"|"drop"|"drop_after_work"|"latency",
//	                                        "status": 503, "retry_after_seconds": 1 (status only),
//	                                        "latency_ms": 100 (latency only), "times": 2,
//	                                        "method": "POST", "path": "/payments/initiate"}: InjectFault
//	DELETE /_sandbox/faults                ClearFaults
//	GET    /_sandbox/deliveries            data {"pending", "paused", "deliveries": [{"event_id", "event", "url",
//	                                        "status", "created_at", "attempts", "body"}]};
//	                                        an attempt is {"at", "url", "status_code", "error", "scheme",
//	                                        "signature", "duration_ms", "response_headers"}
//	POST   /_sandbox/deliveries/wait       {"timeout_seconds": 10} (optional; at most 300):
//	                                       WaitForDeliveries, then the same data; 504
//	                                       "deliveries_pending" with it when time runs out
//	GET    /_sandbox/webhook-url           data {"url", "urls", "scheme"}: where deliveries go ("" and
//	                                       [] when they are off; "url" is the first of "urls") and
//	                                       how they are signed ("payments" or "standard")
//	PUT    /_sandbox/webhook-url           {"url": "http://localhost:8080/webhooks"}, or "" to turn
//	                                       deliveries off (the scheme and secrets stay), or
//	                                       {"urls": [...]}: several receivers, round robin (see
//	                                       Webhook.URLs); data {"url", "urls", "scheme"}
//	GET    /_sandbox/webhook-retries       data {"retries", "waits": ["1s", ...], "waits_seconds": [1, ...]}
//	PUT    /_sandbox/webhook-retries       {"waits": ["1s", "2s", 4]} (Go durations, or seconds; [] for no
//	                                       retry); the same data
//	POST   /_sandbox/events/{id}/redeliver the event again; data is the new delivery, as in /_sandbox/deliveries
//	                                       (with "redelivery": true); 404 for an event not in the log,
//	                                       422 "webhook_not_configured" when deliveries are off
//	POST   /_sandbox/events/redeliver-failed
//	                                       every event whose deliveries all failed; data {"event_ids": [...]}
//	POST   /_sandbox/events/{id}/redeliver {"url": "http://..."} (optional): to another URL
//	POST   /_sandbox/events/trigger        {"event": "payment.completed", "resource_id": "..."}:
//	                                       a test event; data {"id", "event", "created_at"}; 404 for
//	                                       an unknown resource, 422 for an unknown event
//	POST   /_sandbox/deliveries/pause      hold every delivery attempt; data {"paused": true}
//	POST   /_sandbox/deliveries/resume     let them go; data {"paused": false}
//	POST   /_sandbox/payments/{id}/settle  {"status": "completed"|"failed"|"rejected"}: SettlePayment;
//	                                       data is the payment; 409 "payment_not_settleable" when
//	                                       it is not pending after a confirm
//	GET    /_sandbox/redeliveries?after=N  data {"last_seq", "redeliveries": [{"seq", "event_id", "event",
//	                                       "url", "created_at", "body", "to_webhook_url"}]}: the redeliveries asked for
//	                                       after seq N (without after: none, and last_seq), which
//	                                       "payments listen" follows
//	GET    /_sandbox/delivery-chaos        data {"delay", "delay_seconds", "duplicate", "newest_first"}
//	PUT    /_sandbox/delivery-chaos        {"delay": "2s", "duplicate": true, "newest_first": true}
//	                                       (members left out are off)
//
// # Dashboard
//
// Sandbox.Dashboard serves a web page of the server's state at
// URL()+"/_dashboard/": recipients, payments with their events, virtual
// accounts, balances, and every event with each delivery attempt, updated
// every second, with buttons for the actions above. It answers loopback
// clients only (Sandbox.DashboardRemote opens it), needs no API key and
// shows none, nor any webhook secret, whole signature or whole account
// number.
//
// # Deliveries
//
// Each delivery has its own schedule: its first attempt when its event
// occurs, each retry when its wait has passed. At most
// Sandbox.WebhookConcurrency attempts (one by default, so first attempts
// keep the events' order) are in flight, and a delivery waiting for a retry
// holds up nothing. The Delivery… fields of Sandbox make deliveries late,
// duplicated or newest first, as real senders can be.
//
// For example, to expire every quote issued so far:
//
//	curl -X POST "$PAYMENTS_BASE_URL/_sandbox/clock/advance" \
//	    -H "Authorization: Bearer $PAYMENTS_API_KEY" -d '{"seconds": 301}'
package paymentstest
