package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// confirms counts the confirm requests of a payout and their distinct
// idempotency keys, from the fake's request log.
func confirms(srv *paymentstest.Server, payoutID string, gens int) (requests int, keys map[string]bool) {
	keys = map[string]bool{}
	mine := map[string]bool{}
	for g := range gens {
		mine[keyFor(stepConfirm, payoutID, g)] = true
	}
	for _, r := range srv.Requests() {
		if r.Path == "/payments/confirm" && mine[r.IdempotencyKey] {
			requests++
			keys[r.IdempotencyKey] = true
		}
	}
	return requests, keys
}

// A payout to an unknown recipient is refused for good: its job is
// cancelled with the reason and it is never sent again. A payout the
// balance cannot cover waits (the job snoozes, with back-off: a few
// confirms, not a spin) and is tried under the next key generation each
// time; once the balance is funded it is paid, once.
func TestWorkerRefusals(t *testing.T) {
	srv := paymentstest.NewServer(paymentstest.WithBalance(decimal.RequireFromString("50.00")))
	defer srv.Close()
	db := testDB(t)
	path := csvFile(t, "r.csv")
	rows := makeRows(t, srv, 3, path, "r", func(i int) string {
		if i == 2 {
			return "100.00" // more than the balance
		}
		return ""
	})
	rows[1].RecipientID = uuid.NewString() // no such recipient: 404 not_found
	if err := writeRows(path, rows); err != nil {
		t.Fatal(err)
	}
	getenv := env(db, srv)
	loadFile(t, getenv, path, "r")
	startWorkers(t, getenv, "-workers", "3")

	waitFor(t, time.Minute, "the refused-for-good job cancelled and the short one refused twice", func() bool {
		j := payoutJob(db, "r-0001")
		return j != nil && j.State == rivertype.JobStateCancelled &&
			dbCount(db, `SELECT refusals FROM payouts WHERE payout_id = 'r-0002'`) >= 2
	})
	if j := payoutJob(db, "r-0001"); dbCount(db, `SELECT count(*) FROM payouts WHERE payout_id = 'r-0001' AND event = 'failed' AND code = 'not_found'`) != 1 ||
		j == nil || len(j.Errors) == 0 || !strings.Contains(j.Errors[0].Error, "not_found") {
		t.Errorf("the unknown recipient's job: want cancelled with the reason, failed with not_found in its row")
	}
	if j := payoutJob(db, "r-0002"); dbCount(db, `SELECT count(*) FROM payouts WHERE payout_id = 'r-0002' AND event = 'refused' AND code = 'insufficient_balance'`) != 1 ||
		j == nil || (j.State != rivertype.JobStateScheduled && j.State != rivertype.JobStateAvailable && j.State != rivertype.JobStateRunning) {
		t.Errorf("the short payout's job: want snoozed, refused insufficient_balance in its row")
	}

	// Funded: the next try pays it, under a new generation's key.
	va, err := srv.Client().VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual, AccountName: "Treasury", Email: "t@example.com", FirstName: "T", LastName: "Reasury",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.SimulateIncomingPayment(string(va.AccountNumber), decimal.RequireFromString("1000.00"), "NGN"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the short payout paid", func() bool {
		j := payoutJob(db, "r-0002")
		return j != nil && j.State == rivertype.JobStateCompleted && dbCount(db, `SELECT count(*) FROM payouts WHERE payout_id = 'r-0002' AND state = 'completed'`) == 1
	})
	paidOnce(t, srv, []row{rows[0], rows[2]})
	if got := srv.PaymentsByReference(rows[1].PayoutID); len(got) != 0 {
		t.Errorf("the refused payout made %d payments", len(got))
	}
	gen := dbCount(db, `SELECT generation FROM payouts WHERE payout_id = 'r-0002'`)
	n, keys := confirms(srv, "r-0002", gen+1)
	if gen < 2 || len(keys) != gen+1 {
		t.Errorf("generation %d, %d keys confirmed: want one key per generation, at least 3", gen, len(keys))
	}
	// refused-wait 200ms doubling up to 1s: a spin would make hundreds.
	if n > gen+1+3 {
		t.Errorf("%d confirms for %d generations: the job spun", n, gen+1)
	}
	var initiates int
	for _, r := range srv.Requests() {
		if r.Path == "/payments/initiate" && r.IdempotencyKey == keyFor(stepInitiate, "r-0001", 0) {
			initiates++
		}
	}
	if initiates != 1 {
		t.Errorf("the refused-for-good payout was sent %d times, want once", initiates)
	}
}

// A quote that expired while its payout waited for the balance is replaced
// at once: the confirm of the next generation is refused quote_expired, and
// the one after it initiates a new quote and pays it; one payment paid.
func TestQuoteExpiredTakesANewGeneration(t *testing.T) {
	srv := paymentstest.NewServer(paymentstest.WithBalance(decimal.Zero))
	defer srv.Close()
	db := testDB(t)
	path := csvFile(t, "q.csv")
	rows := makeRows(t, srv, 1, path, "q", nil)
	getenv := env(db, srv)
	loadFile(t, getenv, path, "q")
	startWorkers(t, getenv, "-refused-wait", "2s", "-refused-wait-max", "2s")
	waitFor(t, time.Minute, "refused for the balance", func() bool {
		return dbCount(db, `SELECT refusals FROM payouts WHERE payout_id = 'q-0000'`) >= 1
	})
	srv.Advance(payments.QuoteLifetime + time.Minute)
	va, err := srv.Client().VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual, AccountName: "Treasury", Email: "t@example.com", FirstName: "T", LastName: "Reasury",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.SimulateIncomingPayment(string(va.AccountNumber), decimal.RequireFromString("100.00"), "NGN"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "paid", func() bool {
		return dbCount(db, `SELECT count(*) FROM payouts WHERE payout_id = 'q-0000' AND state = 'completed'`) == 1
	})
	paidOnce(t, srv, rows)
	if got := srv.PaymentsByReference("q-0000"); len(got) != 2 {
		t.Errorf("%d payments, want 2: the expired quote's and the paid one", len(got))
	}
	var expired bool
	for _, r := range srv.Requests() {
		if r.Path == "/payments/confirm" && r.StatusCode == 422 && r.IdempotencyKey != keyFor(stepConfirm, "q-0000", 0) {
			expired = true
		}
	}
	if !expired {
		t.Error("no confirm under a later generation was refused (quote_expired)")
	}
	if gen := dbCount(db, `SELECT generation FROM payouts WHERE payout_id = 'q-0000'`); gen < 2 {
		t.Errorf("paid under generation %d: want 2 or more (refused, expired, then a new quote)", gen)
	}
}
