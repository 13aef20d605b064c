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
// many workers run, on however many machines, for however many runs: in any
// span of time d, at most rate*d + burst requests are sent.
// (River's MaxWorkers bounds the jobs running at once in one process, not a
// rate, and multiplies with the processes: it cannot be the limit.)
//
// It is a generic cell rate algorithm applied twice. The row's tat orders
// the waiting requests: each reserves its turn, max(now, tat -
// (burst-1)/rate), and moves tat on by 1/rate, so that the waiters wake one
// after another, not all at once. Waking is not sending: a process that
// wakes late (a loaded machine, a paused VM) would send its request beside
// the ones whose turn is now, and the service would see a bunch. So the
// request is sent only once the row's sent, moved only by requests that are
// sent, says it conforms at the moment it is sent (sent - (burst-1)/rate <=
// now, then sent = max(sent, now) + 1/rate); a request that woke late and
// finds the limit spent waits again, for as long as sent says. The bound
// holds on the send times, whatever the waiters' lateness. The database's
// clock is the only clock, so machines whose clocks differ still share one
// limit. A process that dies after its reservation wastes its turn; nothing
// else. Proven by TestRateLimitHoldsForLateSenders and
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

// reserveSQL reserves a turn: the microseconds until it.
const reserveSQL = `INSERT INTO payouts_rate AS r (name, tat) VALUES ($1, clock_timestamp() + $2 * interval '1 microsecond')
ON CONFLICT (name) DO UPDATE SET tat = greatest(r.tat, clock_timestamp()) + $2 * interval '1 microsecond'
RETURNING (extract(epoch FROM (r.tat - ($2 + $3) * interval '1 microsecond' - clock_timestamp())) * 1000000)::bigint`

// takeSQL sends a request if the limit allows one now (0), else says how
// many microseconds until it may (above 0).
const takeSQL = `WITH t AS (UPDATE payouts_rate SET sent = greatest(sent, clock_timestamp()) + $2 * interval '1 microsecond'
 WHERE name = $1 AND sent - $3 * interval '1 microsecond' <= clock_timestamp() RETURNING 1)
SELECT CASE WHEN EXISTS (SELECT FROM t) THEN 0
 ELSE greatest(1000, (extract(epoch FROM (sent - $3 * interval '1 microsecond' - clock_timestamp())) * 1000000)::bigint) END
FROM payouts_rate WHERE name = $1`

// wait reserves a turn, sleeps until it comes, and returns once the
// request may be sent now. It fails when ctx ends first or the database
// cannot be reached: then nothing may be sent.
func (l *limiter) wait(ctx context.Context) error {
	turn, err := l.reserve(ctx)
	if err != nil {
		return err
	}
	if err := sleep(ctx, turn); err != nil {
		return err
	}
	return l.take(ctx)
}

// tau is how far ahead of its time a request may go: the burst.
func (l *limiter) tau() int64 { return int64(l.burst-1) * l.interval.Microseconds() }

// reserve reserves a turn and returns how long until it.
func (l *limiter) reserve(ctx context.Context) (time.Duration, error) {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var micros int64
	if err := l.pool.QueryRow(qctx, reserveSQL, l.name, l.interval.Microseconds(), l.tau()).Scan(&micros); err != nil {
		return 0, fmt.Errorf("the shared rate limiter (table payouts_rate) could not be read: %w; nothing was sent", err)
	}
	return time.Duration(micros) * time.Microsecond, nil
}

// take returns once the limit allows a request now, and counts it as
// sent: it waits again as long as the limit is spent.
func (l *limiter) take(ctx context.Context) error {
	for {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var micros int64
		err := l.pool.QueryRow(qctx, takeSQL, l.name, l.interval.Microseconds(), l.tau()).Scan(&micros)
		cancel()
		if err != nil {
			return fmt.Errorf("the shared rate limiter (table payouts_rate) could not be read: %w; nothing was sent", err)
		}
		if micros <= 0 {
			return nil
		}
		if err := sleep(ctx, time.Duration(micros)*time.Microsecond); err != nil {
			return err
		}
	}
}

// sleep waits d, or fails when ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
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
