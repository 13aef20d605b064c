package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// recommendedWork are work's flags that docs/retries.md recommends, the
// ones TestOutcomesKeepUpWhileWorkersAreKilled runs with
// (TestDocsRecommendTheKillTestFlags).
var recommendedWork = []string{"-workers", "8", "-rate", "50", "-burst", "5", "-job-timeout", "10s", "-rescue-after", "15s",
	"-retry-min", "1s", "-retry-max", "1m", "-recheck", "2s", "-list-every", "2s"}

// The flags docs/retries.md shows for work are the kill test's.
func TestDocsRecommendTheKillTestFlags(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "retries.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "payouts-river work " + strings.Join(recommendedWork, " "); !strings.Contains(string(b), want) {
		t.Errorf("docs/retries.md does not show %q", want)
	}
}

// killRows is the size of TestOutcomesKeepUpWhileWorkersAreKilled, from
// PAYOUTS_KILL_ROWS; 0 skips it (it takes minutes: .ci/run runs it).
func killRows(t *testing.T) int {
	s := os.Getenv("PAYOUTS_KILL_ROWS")
	if s == "" {
		t.Skip("set PAYOUTS_KILL_ROWS=3000 (.ci/run runs it at its own size)")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 50 {
		t.Fatalf("PAYOUTS_KILL_ROWS=%q: a number of rows, at least 50", s)
	}
	return n
}

// sample is what status showed at one moment, beside the service's count.
type sample struct {
	at                         time.Duration
	decided, sent, completedAt int // completedAt: payments completed at the service
}

// killRun is one run's figures.
type killRun struct {
	elapsed   time.Duration
	kills     int
	samples   []sample
	loadStart string
	loadEnd   string
}

// Six worker processes with the flags docs/retries.md recommends pay a
// file while one of them is SIGKILLed every 1.5 s and started again; the
// same file is first paid without kills. Every row is paid exactly once in
// both runs (the fake's ledger, the balance, status's totals). What status
// shows keeps up: the first decided row within 30 s of the first payment
// completed at the service, never 60 s without a change while payments
// complete there; and the run with kills ends within twice the time of the
// run without. The figures (with the load average) go to the log:
// RELIABILITY.md.
func TestOutcomesKeepUpWhileWorkersAreKilled(t *testing.T) {
	n := killRows(t)
	calm := payKilled(t, n, false)
	killed := payKilled(t, n, true)
	for _, r := range []struct {
		name string
		run  killRun
	}{{"without kills", calm}, {"with kills", killed}} {
		firstCompleted, firstDecided := time.Duration(-1), time.Duration(-1)
		var still time.Duration
		last := r.run.samples[0]
		for _, s := range r.run.samples {
			if firstCompleted < 0 && s.completedAt > 0 {
				firstCompleted = s.at
			}
			if firstDecided < 0 && s.decided > 0 {
				firstDecided = s.at
			}
			if s.decided != last.decided || s.completedAt == last.completedAt {
				last = s
			} else if d := s.at - last.at; d > still {
				still = d
			}
		}
		if firstDecided < 0 || firstDecided-firstCompleted > 30*time.Second {
			t.Errorf("%s: the first payment completed at %v, status showed the first decided row at %v", r.name, firstCompleted, firstDecided)
		}
		if still > 60*time.Second {
			t.Errorf("%s: status stood still for %v while payments completed at the service", r.name, still)
		}
		var timeline []string
		for i, s := range r.run.samples {
			if i%5 == 0 || i == len(r.run.samples)-1 {
				timeline = append(timeline, fmt.Sprintf("%v %d/%d/%d", s.at.Round(time.Second), s.decided, s.sent, s.completedAt))
			}
		}
		t.Logf("%s: status's decided/sent beside the payments completed at the service: %s", r.name, strings.Join(timeline, ", "))
		t.Logf("RELIABILITY: %s: %d rows, 6 worker processes, %d SIGKILLs (one every 1.5 s): every row paid once in %v (%.1f payments/s); "+
			"first decided %v after the first completed payment; status stood still at most %v while payments completed; load %s at the start, %s at the end",
			r.name, n, r.run.kills, r.run.elapsed.Round(time.Second), float64(n)/r.run.elapsed.Seconds(),
			(firstDecided - firstCompleted).Round(time.Second), still.Round(time.Second), r.run.loadStart, r.run.loadEnd)
	}
	if killed.elapsed > 2*calm.elapsed {
		t.Errorf("with kills the run took %v, more than twice the %v without", killed.elapsed.Round(time.Second), calm.elapsed.Round(time.Second))
	}
	t.Logf("RELIABILITY: with kills / without: %.2fx", killed.elapsed.Seconds()/calm.elapsed.Seconds())
}

// loadAvg is the machine's load average (1, 5, 15 minutes).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// payKilled pays n rows with six worker processes, killing one every 1.5 s
// when kill says so, and checks that every row was paid exactly once.
func payKilled(t *testing.T, n int, kill bool) killRun {
	t.Helper()
	db := testDB(t)
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{LogLimit: 20*n + 10000}), paymentstest.WithBalance(decimal.Zero))
	defer srv.Close()
	name := "calm"
	if kill {
		name = "killed"
	}
	path := csvFile(t, name+".csv")
	rows := makeRows(t, srv, n, path, name, func(i int) string { return decimal.New(int64(1000+(i*7919)%90000), -2).String() })
	var total decimal.Decimal
	for _, r := range rows {
		total = total.Add(r.Amount)
	}
	va, err := srv.Client().VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual, AccountName: "Treasury", Email: "t@example.com", FirstName: "T", LastName: "Reasury",
	})
	if err != nil {
		t.Fatal(err)
	}
	funded := total.Mul(decimal.NewFromInt(2))
	if _, err := srv.SimulateIncomingPayment(string(va.AccountNumber), funded, "NGN"); err != nil {
		t.Fatal(err)
	}
	getenv := env(db, srv)
	loadFile(t, getenv, path, name)
	a := testApp(t, db)

	childEnv := append(os.Environ(), "PAYOUTS_RIVER_CHILD=1", "DATABASE_URL="+db,
		"PAYMENTS_API_KEY="+srv.APIKey(), "PAYMENTS_BASE_URL="+srv.URL())
	args := append(append([]string{"work"}, recommendedWork...), "-limiter", name)
	dir := t.TempDir()
	run := killRun{loadStart: loadAvg()}
	start := time.Now()
	workers, logOf := startChildren(t, 6, dir, childEnv, args)
	defer func() { stopChildren(t, name+": ", workers, logOf) }()

	// What status shows, every 2 s, beside the payments completed at the
	// service; and a worker killed every 1.5 s.
	look := time.NewTicker(2 * time.Second)
	defer look.Stop()
	killer := time.NewTicker(1500 * time.Millisecond)
	defer killer.Stop()
	deadline := time.Now().Add(20*time.Minute + time.Duration(n)*200*time.Millisecond)
	for done := false; !done; {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not every job completed within the limit", name)
		}
		select {
		case <-killer.C:
			if kill {
				k := run.kills % len(workers)
				workers[k].kill()
				run.kills++
				workers[k] = startChild(t, childEnv, logOf(k), args...)
			}
		case <-look.C:
			s := sample{at: time.Since(start)}
			for _, p := range srv.Payments() {
				if p.Status == payments.PaymentStatusCompleted {
					s.completedAt++
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			rs, err := a.readRun(ctx, name)
			if err == nil {
				err = a.fromTracker(ctx, rs)
			}
			cancel()
			if err != nil {
				t.Logf("%s: status could not read the run: %v", name, err)
				continue
			}
			p := progressOf(rs)
			s.decided, s.sent = p.decided(), p.sent()
			run.samples = append(run.samples, s)
			done = jobCount(db, rivertype.JobStateCompleted) == n
		}
	}
	run.elapsed = time.Since(start)
	run.loadEnd = loadAvg()

	paid := paidOnce(t, srv, rows)
	if got, want := srv.Balance("NGN"), funded.Sub(paid); !got.Equal(want) {
		t.Errorf("%s: the balance is %s, want %s (funded %s less the %s paid)", name, got, want, funded, paid)
	}
	status, out := runIn(t, context.Background(), env(db, nil), false, "status", "-run", name, "-report", filepath.Join(dir, "report.csv"))
	if status != exitCompleted || !strings.Contains(out, fmt.Sprintf("payouts: %d rows: %d completed, 0 failed, 0 rejected, 0 refused, 0 pending, 0 unknown\n", n, n)) ||
		!strings.Contains(out, fmt.Sprintf("  NGN  all        %6d rows  amount %14s", n, total.StringFixed(2))) {
		t.Errorf("%s: status: %d:\n%s", name, status, out)
	}
	return run
}
