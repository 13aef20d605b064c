package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// status shows the run's rows by state: on a terminal a bar rewritten in
// place, elsewhere plain lines; then the report and the summary, from the
// rows, their jobs and the tracker; its exit status says whether every row
// is decided. It works on a machine that runs no worker, while the run goes
// and after it.
func TestStatus(t *testing.T) {
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{ProcessingDelay: time.Hour})) // the late payment is settled by the test
	defer srv.Close()
	db := testDB(t)
	path := csvFile(t, "s.csv")
	rows := makeRows(t, srv, 4, path, "s", func(i int) string {
		switch i {
		case 1:
			return paymentstest.AmountFails
		case 2:
			return paymentstest.AmountCompletesLate
		}
		return ""
	})
	getenv := env(db, srv)
	loadFile(t, getenv, path, "s")
	report := csvFile(t, "report.csv")

	// Before any worker: nothing decided; a plain line in a pipe.
	status, out := runIn(t, context.Background(), env(db, nil), false, "status", "-run", "s", "-report", report)
	if status != exitRunAgain || !strings.Contains(out, " run s: 0 of 4 rows decided, 0 sent (0.0 decided/s, ETA ?): 0 completed, 0 failed, 0 rejected, 0 refused; 0 pending, 0 waiting (refused, tried again later), 0 paying, 4 queued\n") ||
		strings.Contains(out, "\r") {
		t.Errorf("before the workers: %d:\n%s", status, out)
	}
	if !strings.Contains(out, "payouts: 4 rows: 0 completed, 0 failed, 0 rejected, 0 refused, 0 pending, 4 unknown\n") ||
		!strings.Contains(out, "4 rows are not decided yet: the workers are at them (status again, or -watch); exit status 3\n") {
		t.Errorf("summary before the workers:\n%s", out)
	}

	stop := startWorkers(t, getenv)
	waitFor(t, time.Minute, "three rows decided and the late one confirmed", func() bool {
		return dbCount(db, `SELECT count(*) FROM payouts WHERE run = 's' AND (event = 'outcome' OR (event = 'done' AND payout_id = 's-0002'))`) == 4
	})
	stop() // status needs no worker
	// On a terminal: the bar, rewritten in place.
	status, out = runIn(t, context.Background(), env(db, nil), true, "status", "-run", "s", "-report", report)
	if status != exitRunAgain || !strings.HasPrefix(out, "\r\033[K[###############.....] 3/4 decided, 3 sent, 0.0/s, ETA ?, 1 not completed\n") {
		t.Errorf("on a terminal: %d:\n%q", status, out)
	}

	// The late payment completes: the tracker knows it before any job
	// records it (no worker runs), and status says so.
	late := srv.PaymentsByReference(rows[2].PayoutID)
	if len(late) != 1 {
		t.Fatalf("%d payments for the late row", len(late))
	}
	if _, err := srv.SettlePayment(late[0].ID, "completed"); err != nil {
		t.Fatal(err)
	}
	ev := srv.Events()[len(srv.Events())-1]
	parsed, err := parseFakeEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	a := testApp(t, db)
	if _, _, err := a.tracker.Apply(context.Background(), parsed); err != nil {
		t.Fatal(err)
	}
	status, out = runIn(t, context.Background(), env(db, nil), false, "status", "-run", "s", "-report", report, "-watch", "10ms")
	if status != exitNotCompleted || !strings.Contains(out, "run s: 4 of 4 rows decided, 3 sent (0.0 decided/s, done): 3 completed, 1 failed, 0 rejected, 0 refused;") {
		t.Errorf("after the run: %d:\n%s", status, out)
	}
	for _, want := range []string{
		"payouts: 4 rows: 3 completed, 1 failed, 0 rejected, 0 refused, 0 pending, 0 unknown\n",
		"  NGN  completed       3 rows  amount ",
		"  NGN  all             4 rows  amount ",
		"rows that did not complete:\n  s-0001 " + paymentstest.AmountFails + " NGN failed: payment.failed (event ",
		"1 rows did not complete",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	got := lines(string(b))
	if len(got) != 5 || got[0] != "payout_id,recipient_id,amount,currency,fee,state,payment_id,stan,event_id,reason" ||
		!strings.HasPrefix(got[3], "s-0002,"+rows[2].RecipientID+","+paymentstest.AmountCompletesLate+",NGN,") ||
		!strings.Contains(got[3], ",completed,"+late[0].ID+",") {
		t.Errorf("report:\n%s", b)
	}
}

// parseFakeEvent is the fake's event as the SDK reads it.
func parseFakeEvent(ev paymentstest.Event) (*payments.Event, error) {
	return payments.ParseEvent(ev.Body)
}

// testApp is the program's app on db, without workers.
func testApp(t *testing.T, db string) *app {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	a, err := newApp(context.Background(), pool, nil, riverConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// On a terminal the progress is one line that fits 80 columns, whatever
// the counts, so that the carriage return and erase-line that rewrite it
// clear all of it (a wrapped line leaves its first rows on the screen); it
// shows the rows decided and the rows whose money went out apart, a rate
// and the time left.
func TestStatusBarFitsATerminal(t *testing.T) {
	start := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	r := pace{start: start, startDone: 100, now: start.Add(50 * time.Second), done: 600}
	for _, p := range []progress{
		{total: 3000, completed: 500, pending: 1124, queued: 1376},
		{total: 9_999_999, completed: 9_999_990, failed: 1, rejected: 1, refused: 1, pending: 6, lost: 1_000_000},
		{total: 4},
	} {
		got := p.bar(r)
		line, ok := strings.CutPrefix(got, "\r\033[K")
		if !ok || strings.ContainsAny(line, "\r\n\033") || utf8.RuneCountInString(line) >= 80 {
			t.Errorf("%+v: %q (%d characters): want one line under 80 columns after the erase", p, got, utf8.RuneCountInString(line))
		}
	}
	got := progress{total: 3000, completed: 500, pending: 1124, queued: 1376}.bar(r)
	if want := "\r\033[K[###.................] 500/3000 decided, 1624 sent, 10.0/s, ETA 4m10s"; got != want {
		t.Errorf("bar: %q, want %q", got, want)
	}
}

// Ctrl-C on status -watch stops the watch with exit status 0.
func TestStatusWatchInterrupted(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	db := testDB(t)
	path := csvFile(t, "i.csv")
	makeRows(t, srv, 2, path, "i", nil)
	loadFile(t, env(db, nil), path, "i")
	for _, tty := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // as Ctrl-C would, during the watch
		status, out := runIn(t, ctx, env(db, nil), tty, "status", "-run", "i", "-report", csvFile(t, "r.csv"), "-watch", "200ms")
		cancel()
		if status != exitCompleted || strings.Contains(out, "context") || !strings.Contains(out, "stopped watching") {
			t.Errorf("interrupted (terminal %v): %d:\n%s", tty, status, out)
		}
	}
}
