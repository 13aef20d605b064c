// Package chaostest holds the SDK's end-to-end reliability tests, which run
// the public API against paymentstest under injected faults: a chaos run of
// hundreds of concurrent payments (no duplicate, none lost, every error typed
// and carrying its idempotency key, no goroutine left behind), and a whole
// journey with a debug logger that checks no secret ever reaches a log line
// or an error string. RELIABILITY.md at the module root lists what they
// prove.
//
// The package has no code of its own: only tests, which import nothing but
// the SDK's public API and paymentstest, exactly as a merchant's tests
// would. Being a package of its own, it runs in parallel with the others
// under go test ./....
//
// The chaos run draws its faults from a seed that it logs; set
// PAYMENTS_CHAOS_SEED to that number to replay the same sequence of draws
// (which request meets which draw still depends on how the goroutines
// interleave), and PAYMENTS_CHAOS_PAYMENTS to run more (or fewer) payments
// than 512.
package chaostest
