package main

import (
	"sort"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/paymentstest"
)

// Two runs paid at once by three workers (each with its own Client and
// River client, as separate processes would be) share one rate: counted
// from the fake's request log, no window of the run holds more requests
// than the rate allows (with half a second of slack for the time between a
// request's slot and its arrival). Each worker alone may run 8 payouts at
// once: with a limit each (the same rate, as a Client's WithRateLimit
// would be) they send about three times the rate, and the test fails.
func TestRateLimitSharedByRunsAndWorkers(t *testing.T) {
	const (
		rate   = 6.0
		burst  = 1
		window = 2 * time.Second
		slack  = 500 * time.Millisecond
	)
	srv := paymentstest.NewServer()
	defer srv.Close()
	db := testDB(t)
	a, b := csvFile(t, "a.csv"), csvFile(t, "b.csv")
	rows := append(makeRows(t, srv, 15, a, "a", nil), makeRows(t, srv, 15, b, "b", nil)...)
	getenv := env(db, srv)
	loadFile(t, getenv, a, "a")
	loadFile(t, getenv, b, "b")
	from := len(srv.Requests())
	for range 3 {
		startWorkers(t, getenv, "-workers", "8", "-rate", "6", "-burst", "1", "-limiter", "shared")
	}
	waitFor(t, 2*time.Minute, "both runs paid", func() bool {
		return dbCount(db, `SELECT count(*) FROM payouts WHERE state = 'completed'`) == len(rows)
	})
	paidOnce(t, srv, rows)

	reqs := srv.Requests()[from:]
	if len(reqs) < 2*len(rows) {
		t.Fatalf("%d requests for %d payouts", len(reqs), len(rows))
	}
	at := make([]time.Time, len(reqs))
	for i, r := range reqs {
		at[i] = r.At
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	limit := int(rate*(window+slack).Seconds()) + burst
	most, j := 0, 0
	for i := range at {
		for at[i].Sub(at[j]) >= window {
			j++
		}
		most = max(most, i-j+1)
	}
	if most > limit {
		t.Errorf("%d requests within %v: the shared limit allows %d (%v/s, burst %d)", most, window, limit, rate, burst)
	}
	span := at[len(at)-1].Sub(at[0])
	t.Logf("%d requests in %v (%.1f/s; the limit %v/s); at most %d in %v", len(at), span.Round(time.Millisecond),
		float64(len(at))/span.Seconds(), rate, most, window)
}
