package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
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
	if most := mostWithin(at, window); most > limit {
		t.Errorf("%d requests within %v: the shared limit allows %d (%v/s, burst %d)", most, window, limit, rate, burst)
	}
	most := mostWithin(at, window)
	span := at[len(at)-1].Sub(at[0])
	t.Logf("%d requests in %v (%.1f/s; the limit %v/s); at most %d in %v", len(at), span.Round(time.Millisecond),
		float64(len(at))/span.Seconds(), rate, most, window)
}

// Senders that wake late still leave the service at the limit: the even
// ones of 30 senders sleep through their turns until 2 s after the start
// (a machine paused, then resumed) and wake at once, beside the senders
// whose turn it is. Counted from the arrival times a fake service records,
// no window of 100 ms, 250 ms, 500 ms, 1 s or 2 s holds more than rate x
// window + burst requests (with 100 ms of slack for the way from the
// limiter to the service). A limiter that sends when it wakes, without
// looking again, sends the late ones in one bunch, and the test fails.
func TestRateLimitHoldsForLateSenders(t *testing.T) {
	const (
		rate    = 20.0
		burst   = 1
		senders = 30
		each    = 4
		pause   = 2 * time.Second
		slack   = 100 * time.Millisecond
	)
	a := testApp(t, testDB(t))
	l := newLimiter(a.pool, "late", rate, burst)
	var (
		mu sync.Mutex
		at []time.Time
	)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
	}))
	defer svc.Close()
	resume := time.Now().Add(pause)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			for range each {
				ctx := context.Background()
				turn, err := l.reserve(ctx)
				if err == nil {
					if i%2 == 0 {
						turn = max(turn, time.Until(resume)) // paused until then
					}
					err = sleep(ctx, turn)
				}
				if err == nil {
					err = l.take(ctx)
				}
				if err == nil {
					var resp *http.Response
					if resp, err = http.Get(svc.URL); err == nil {
						resp.Body.Close()
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(at) != senders*each {
		t.Fatalf("%d requests arrived, want %d", len(at), senders*each)
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	for _, window := range []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second} {
		limit := int(rate*(window+slack).Seconds()) + burst
		most := mostWithin(at, window)
		if most > limit {
			t.Errorf("%d requests arrived within %v: the limit allows %d (%v/s, burst %d, %v slack)", most, window, limit, rate, burst, slack)
		}
		t.Logf("at most %d requests in %v (limit %d)", most, window, limit)
	}
}

// mostWithin is the most of the sorted times at that any span of window
// holds.
func mostWithin(at []time.Time, window time.Duration) int {
	most, j := 0, 0
	for i := range at {
		for at[i].Sub(at[j]) >= window {
			j++
		}
		most = max(most, i-j+1)
	}
	return most
}
