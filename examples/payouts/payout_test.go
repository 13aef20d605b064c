package main

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// Only a refusal the service answered (a 4xx) is a final failure: a 5xx,
// even one never retried (501, a proxy's 524), or a redirect says nothing
// of whether the payment was made, so the row stays unknown for the next
// run to repeat with its keys. Marking it failed could have it paid again
// by other means.
func TestFailedKeepsUnansweredOutcomesUnknown(t *testing.T) {
	j, _, err := openJournal(filepath.Join(t.TempDir(), "journal.jsonl"))
	require.NoError(t, err)
	defer j.close()
	p := &payer{journal: j}
	for _, tc := range []struct {
		status int
		want   string
	}{
		{http.StatusUnprocessableEntity, eventFailed},
		{http.StatusNotFound, eventFailed},
		{http.StatusServiceUnavailable, eventUnknown},
		{http.StatusNotImplemented, eventUnknown},
		{524, eventUnknown},
		{http.StatusFound, eventUnknown},
		{http.StatusTooManyRequests, eventUnknown},
	} {
		rec, err := p.failed(context.Background(), record{PayoutID: "po-1", Step: "confirm"}, &payments.APIError{StatusCode: tc.status})
		require.NoError(t, err)
		assert.Equal(t, tc.want, rec.Event, "HTTP %d", tc.status)
	}
}

// A refusal with a curable cause is journaled refused, with its code, and
// the next run tries the row under the next key generation: the same keys
// would replay the refusal for ever. Only a 4xx is such a refusal: a 5xx
// stays unknown, repeated with its keys.
func TestFailedMarksCurableRefusals(t *testing.T) {
	j, _, err := openJournal(filepath.Join(t.TempDir(), "journal.jsonl"))
	require.NoError(t, err)
	defer j.close()
	p := &payer{journal: j}
	for _, tc := range []struct {
		status int
		code   payments.ErrorCode
		want   string
	}{
		{http.StatusUnprocessableEntity, payments.CodeInsufficientBalance, eventRefused},
		{http.StatusUnprocessableEntity, payments.CodeRecipientNotVerified, eventRefused},
		{http.StatusUnprocessableEntity, payments.CodeRecipientVerificationFailed, eventRefused},
		{http.StatusUnprocessableEntity, payments.CodeQuoteExpired, eventRefused},
		{http.StatusUnprocessableEntity, payments.CodeDuplicateReference, eventFailed},
		{http.StatusUnprocessableEntity, payments.CodeQuoteAlreadyConfirmed, eventFailed},
		{http.StatusUnprocessableEntity, payments.CodeValidationFailed, eventFailed},
		{http.StatusServiceUnavailable, payments.CodeInsufficientBalance, eventUnknown},
		{http.StatusInternalServerError, payments.CodeQuoteExpired, eventUnknown},
	} {
		rec, err := p.failed(context.Background(), record{PayoutID: "po-1", Step: stepConfirm, Generation: 2},
			&payments.APIError{StatusCode: tc.status, Code: tc.code})
		require.NoError(t, err)
		assert.Equal(t, tc.want, rec.Event, "HTTP %d %s", tc.status, tc.code)
	}
}

// A row refused for its balance is paid under the same payout id once the
// account is funded: each run after a refusal uses the next generation's
// keys (the same keys would replay the refusal), confirming the same quote
// while it lives, and a new one once it expired. Exactly one payment
// completes per row, and the balance is drawn once.
func TestPayoutsRefusedForBalancePaidAfterFunding(t *testing.T) {
	for _, expire := range []bool{false, true} {
		t.Run(map[bool]string{false: "same quote", true: "quote expired"}[expire], func(t *testing.T) {
			srv := paymentstest.NewServer(paymentstest.WithBalance(decimal.Zero))
			defer srv.Close()
			dir := t.TempDir()
			rows := makeRows(t, srv, 6, filepath.Join(dir, "payouts.csv"))
			journalPath := filepath.Join(dir, "payouts.journal")
			c := srv.Client()
			runOnce := func() string {
				t.Helper()
				j, state, err := openJournal(journalPath)
				require.NoError(t, err)
				defer j.close()
				var out bytes.Buffer
				unknown, err := payAll(context.Background(), &payer{client: c, journal: j}, rows, state, 3, &out)
				require.NoError(t, err)
				assert.Zero(t, unknown)
				return out.String()
			}
			confirmKeys := func(from int) (keys []string) {
				for _, r := range srv.Requests()[from:] {
					if r.Path == "/payments/confirm" {
						keys = append(keys, r.IdempotencyKey)
					}
				}
				return keys
			}

			out := runOnce()
			assert.Contains(t, out, "payouts: 6 rows: 0 done, 0 failed, 0 unknown, 6 refused (")
			assert.Contains(t, out, "6 refused, nothing paid, for a cause that can be fixed")
			for _, r := range rows {
				rec := readState(t, journalPath)[r.PayoutID]
				assert.Equal(t, eventRefused, rec.Event)
				assert.Equal(t, string(payments.CodeInsufficientBalance), rec.Code)
				assert.Equal(t, 0, rec.Generation)
			}

			// Not funded yet: the next run is refused again, fresh, under
			// generation 1: a replay of generation 0 would prove nothing.
			from := len(srv.Requests())
			runOnce()
			var want []string
			for _, r := range rows {
				rec := readState(t, journalPath)[r.PayoutID]
				assert.Equal(t, eventRefused, rec.Event)
				assert.Equal(t, 1, rec.Generation)
				want = append(want, keyFor(stepConfirm, r.PayoutID, 1))
			}
			assert.ElementsMatch(t, want, confirmKeys(from))
			for _, r := range srv.Requests()[from:] {
				assert.NotEqual(t, "/payments/initiate", r.Path, "the quotes live: only confirms")
			}

			if expire {
				srv.Advance(payments.QuoteLifetime + time.Minute)
			}
			va, err := c.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
				AccountType: payments.AccountTypeIndividual, AccountName: "Acme", Email: "ops@example.com",
				FirstName: "Ada", LastName: "Okafor", BVN: "12345678901",
			})
			require.NoError(t, err)
			_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), decimal.RequireFromString("100000"), "NGN")
			require.NoError(t, err)
			funded := srv.Balance("NGN")

			out = runOnce()
			assert.Contains(t, out, "payouts: 6 rows: 6 done, 0 failed, 0 unknown, 0 refused (")
			state := readState(t, journalPath)
			total := decimal.Zero
			for _, r := range rows {
				rec := state[r.PayoutID]
				assert.Equal(t, eventDone, rec.Event)
				completed := completedPayments(srv, r.PayoutID)
				require.Len(t, completed, 1, r.PayoutID)
				total = total.Add(completed[0].Quote.TotalAmount)
				if expire {
					// generation 2's confirm met the expired quote: a
					// new quote, under generation 3.
					assert.Equal(t, 3, rec.Generation)
					assert.Len(t, srv.PaymentsByReference(r.PayoutID), 2, "the expired quote's payment, never confirmed, and the new one")
				} else {
					assert.Equal(t, 2, rec.Generation)
					assert.Len(t, srv.PaymentsByReference(r.PayoutID), 1, "the same quote was confirmed")
				}
			}
			assert.True(t, funded.Sub(total).Equal(srv.Balance("NGN")), "drawn once per row")

			// Done rows are never sent again.
			from = len(srv.Requests())
			runOnce()
			assert.Len(t, srv.Requests(), from)
		})
	}
}

// An unknown outcome is repeated with the keys it was tried with, whatever
// its generation: a new generation starts only after a known refusal.
func TestPayRepeatsAnUnknownOutcomeWithItsKeys(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	dir := t.TempDir()
	rows := makeRows(t, srv, 1, filepath.Join(dir, "payouts.csv"))
	j, _, err := openJournal(filepath.Join(dir, "payouts.journal"))
	require.NoError(t, err)
	defer j.close()
	from := len(srv.Requests())
	id := rows[0].PayoutID
	rec, err := (&payer{client: srv.Client(), journal: j}).pay(context.Background(), rows[0],
		record{PayoutID: id, Event: eventUnknown, Step: stepInitiate, Generation: 1, Code: string(payments.CodeInsufficientBalance)})
	require.NoError(t, err)
	assert.Equal(t, eventDone, rec.Event)
	var keys []string
	for _, r := range srv.Requests()[from:] {
		keys = append(keys, r.Path+" "+r.IdempotencyKey)
	}
	assert.Equal(t, []string{"/payments/initiate " + keyFor(stepInitiate, id, 1), "/payments/confirm " + keyFor(stepConfirm, id, 1)}, keys)
}
