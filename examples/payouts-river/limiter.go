package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// limiter is the rate limit that every worker of every process shares: a
// row of payouts_rate in PostgreSQL, read and moved forward in one
// statement, so that the service sees at most the configured rate however
// many workers run, on however many machines, for however many runs.
// (River's MaxWorkers bounds the jobs running at once in one process, not a
// rate, and multiplies with the processes: it cannot be the limit.)
//
// It is a generic cell rate algorithm with reservations: the row holds the
// theoretical arrival time (tat) of the next request. Each request
// reserves its slot, max(now, tat - (burst-1)/rate), moves tat to
// max(tat, now) + 1/rate, and waits for its slot before it is sent. So any
// span of time d holds at most rate*d + burst requests, counted when they
// are sent. The database's clock is the only clock, so machines whose
// clocks differ still share one limit. A process that dies after its
// reservation wastes its slot; nothing else. Proven by
// TestRateLimitSharedByRunsAndWorkers.
type limiter struct {
	pool     *pgxpool.Pool
	name     string
	interval time.Duration // 1/rate
	burst    int
}

// newLimiter returns the limiter named name (every process that gives the
// same name on the same database shares it) at rate requests a second, in
// bursts of at most burst.
func newLimiter(pool *pgxpool.Pool, name string, rate float64, burst int) *limiter {
	return &limiter{pool: pool, name: name, interval: time.Duration(float64(time.Second) / rate), burst: max(burst, 1)}
}

const reserveSQL = `INSERT INTO payouts_rate AS r (name, tat) VALUES ($1, clock_timestamp() + $2 * interval '1 microsecond')
ON CONFLICT (name) DO UPDATE SET tat = greatest(r.tat, clock_timestamp()) + $2 * interval '1 microsecond'
RETURNING (extract(epoch FROM (r.tat - ($2 + $3) * interval '1 microsecond' - clock_timestamp())) * 1000000)::bigint`

// wait reserves a slot and sleeps until it comes. It fails when ctx ends
// first or the database cannot be reached: then nothing may be sent.
func (l *limiter) wait(ctx context.Context) error {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var micros int64
	tau := int64(l.burst-1) * l.interval.Microseconds()
	if err := l.pool.QueryRow(qctx, reserveSQL, l.name, l.interval.Microseconds(), tau).Scan(&micros); err != nil {
		return fmt.Errorf("the shared rate limiter (table payouts_rate) could not be read: %w; nothing was sent", err)
	}
	if micros <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(micros) * time.Microsecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the shared rate limit: %w; nothing was sent", ctx.Err())
	}
}

// middleware makes every HTTP attempt of a Client (retries and event
// listings included) wait for the shared limit: give it to
// payments.WithMiddleware.
func (l *limiter) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if err := l.wait(req.Context()); err != nil {
		return nil, err
	}
	return next(req)
}
