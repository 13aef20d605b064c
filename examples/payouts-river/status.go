package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"

	"github.com/paymentsapi/payments-go/outcome"
)

// runRow is a payout's row with its job's state.
type runRow struct {
	record
	JobState, JobError string
	JobAttempts        int
}

// readRun reads a run's rows, in the file's order, with their jobs (read
// through River's JobList).
func (a *app) readRun(ctx context.Context, run string) ([]runRow, error) {
	rows, err := a.pool.Query(ctx, `SELECT `+recordColumns+` FROM payouts WHERE run = $1 ORDER BY line`, run)
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", run, err)
	}
	var out []runRow
	for rows.Next() {
		rec, err := scanRecord(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("read run %s: %w", run, err)
		}
		out = append(out, runRow{record: rec})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read run %s: %w", run, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("run %q has no rows: load its file first (payouts-river load -csv FILE -run %s)", run, run)
	}
	jobs, err := a.jobs(ctx, out)
	if err != nil {
		return nil, fmt.Errorf("read run %s: its jobs: %w", run, err)
	}
	for i := range out {
		if j := jobs[out[i].JobID]; j != nil {
			out[i].JobState, out[i].JobAttempts = string(j.State), j.Attempt
			if n := len(j.Errors); n > 0 {
				out[i].JobError = j.Errors[n-1].Error
			}
		}
	}
	return out, nil
}

// jobListPage is how many jobs one JobList call asks for.
const jobListPage = 1000

// jobs reads the River jobs of rows through River's JobList, by id.
func (a *app) jobs(ctx context.Context, rows []runRow) (map[int64]*rivertype.JobRow, error) {
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		if r.JobID != 0 {
			ids = append(ids, r.JobID)
		}
	}
	out := make(map[int64]*rivertype.JobRow, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), jobListPage)
		res, err := a.river.JobList(ctx, river.NewJobListParams().IDs(ids[:n]...).First(n))
		if err != nil {
			return nil, err
		}
		for _, j := range res.Jobs {
			out[j.ID] = j
		}
		ids = ids[n:]
	}
	return out, nil
}

// fromTracker fills in the final state of confirmed rows whose job has not
// recorded it yet but the tracker has (its job completes them next).
func (a *app) fromTracker(ctx context.Context, rows []runRow) error {
	for i := range rows {
		r := &rows[i]
		if r.Event != eventDone || r.PaymentID == "" {
			continue
		}
		o, err := a.tracker.Get(ctx, r.PaymentID)
		if errors.Is(err, outcome.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read the outcome of payout %s: %w", r.PayoutID, err)
		}
		if step, ok := o.Decided(); ok && o.State.Final() {
			r.Event, r.State, r.EventID = eventOutcome, string(o.State), step.EventID
		}
	}
	return nil
}

// reportOf gives each row its report state, as the single-machine
// example's report does from its journal.
func reportOf(rows []runRow) []reportRow {
	out := make([]reportRow, len(rows))
	for i, r := range rows {
		rr := reportRow{row: r.row, PaymentID: r.PaymentID, Stan: r.Stan, EventID: r.EventID}
		rr.Fee, _ = decimal.NewFromString(r.Fee) // "" (no quote) is zero
		switch r.Event {
		case eventOutcome:
			rr.State, rr.Cause = r.State, r.Reason
			if rr.State != stateCompleted && rr.Cause == "" {
				rr.Cause = "the service sent payment." + r.State
			}
		case eventDone:
			rr.State, rr.Cause = statePending, "confirmed; no final outcome yet"
		case eventFailed, eventRefused:
			rr.State, rr.Cause = stateRefused, r.Reason
		case "":
			rr.State, rr.Cause = stateUnknown, "not paid yet"
		default: // initiated, unknown
			rr.State, rr.Cause = stateUnknown, r.Reason
			if rr.Cause == "" {
				rr.Cause = "quoted, not confirmed yet"
			}
		}
		if r.JobState == "discarded" {
			rr.Cause = fmt.Sprintf("the job was discarded after %d attempts (last error: %s): retry it with River UI or the river CLI; it pays with the same keys",
				r.JobAttempts, r.JobError)
		}
		rr.Why = rr.Cause
		switch {
		case r.Event == eventOutcome && rr.State != stateCompleted:
			rr.Why = fmt.Sprintf("payment.%s (event %s, payment %s)", r.State, r.EventID, r.PaymentID)
		case r.Event == eventRefused && r.Code != "":
			rr.Why = r.Code + ": nothing paid; the job tries again after a wait (new keys)"
		case r.Event == eventFailed && r.Code != "":
			rr.Why = r.Code + ": refused for good; see the report"
		}
		out[i] = rr
	}
	return out
}

// progress counts a run's rows by where they are.
type progress struct {
	total                                  int
	completed, failed, rejected, refused   int // decided
	pending, waiting, paying, queued, lost int // not yet
}

func progressOf(rows []runRow) progress {
	p := progress{total: len(rows)}
	for _, r := range rows {
		switch {
		case r.JobState == "discarded":
			p.lost++
		case r.Event == eventOutcome && r.State == stateCompleted:
			p.completed++
		case r.Event == eventOutcome && r.State == stateRejected:
			p.rejected++
		case r.Event == eventOutcome:
			p.failed++
		case r.Event == eventFailed:
			p.refused++
		case r.Event == eventDone:
			p.pending++
		case r.Event == eventRefused:
			p.waiting++
		case r.Event == "" && r.JobState != "running":
			p.queued++
		default:
			p.paying++
		}
	}
	return p
}

func (p progress) decided() int { return p.completed + p.failed + p.rejected + p.refused }

// sent is how many rows' money went out: confirmed payments, decided or
// not, less those that failed or were rejected.
func (p progress) sent() int { return p.completed + p.pending }

// counts is the progress in words.
func (p progress) counts() string {
	s := fmt.Sprintf("%d completed, %d failed, %d rejected, %d refused; %d pending, %d waiting (refused, tried again later), %d paying, %d queued",
		p.completed, p.failed, p.rejected, p.refused, p.pending, p.waiting, p.paying, p.queued)
	if p.lost > 0 {
		s += fmt.Sprintf(", %d discarded jobs (see the report)", p.lost)
	}
	return s
}

// barWidth is the progress bar's width in characters.
const barWidth = 20

// termWidth is the widest line the bar writes: one less than a terminal of
// 80 columns, so that it never wraps (a wrapped line is not cleared by the
// carriage return and erase-line that rewrite it).
const termWidth = 79

// pace is how fast rows are decided: the first look of a watch and the
// latest.
type pace struct {
	start     time.Time
	startDone int
	now       time.Time
	done      int
}

// rate is rows decided a second since the watch began; 0 before it can say.
func (r pace) rate() float64 {
	d := r.now.Sub(r.start).Seconds()
	if d < 1 || r.done <= r.startDone {
		return 0
	}
	return float64(r.done-r.startDone) / d
}

// eta is the time left at the rate, as a short text.
func (r pace) eta(left int) string {
	rate := r.rate()
	switch {
	case left == 0:
		return "done"
	case rate == 0:
		return "ETA ?"
	}
	return "ETA " + time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second).String()
}

// notCompleted counts the decided rows that did not complete.
func (p progress) notCompleted() int { return p.failed + p.rejected + p.refused }

// bar is the progress on a terminal: one line of at most termWidth
// characters, rewritten in place: a bar of the decided rows, the rows
// decided, the rows whose money went out, the rate and the time left.
func (p progress) bar(r pace) string {
	n := 0
	if p.total > 0 {
		n = p.decided() * barWidth / p.total
	}
	s := fmt.Sprintf("[%s%s] %d/%d decided, %d sent, %.1f/s, %s", strings.Repeat("#", n), strings.Repeat(".", barWidth-n),
		p.decided(), p.total, p.sent(), r.rate(), r.eta(p.total-p.decided()))
	if k := p.notCompleted(); k > 0 {
		s += fmt.Sprintf(", %d not completed", k)
	}
	if p.lost > 0 {
		s += fmt.Sprintf(", %d discarded", p.lost)
	}
	if len(s) > termWidth {
		s = s[:termWidth-3] + "..."
	}
	return "\r\033[K" + s
}

// line is the progress elsewhere (a pipe, a log): one plain line.
func (p progress) line(run string, r pace) string {
	return fmt.Sprintf("%s run %s: %d of %d rows decided, %d sent (%.1f decided/s, %s): %s\n", r.now.UTC().Format(time.RFC3339), run,
		p.decided(), p.total, p.sent(), r.rate(), r.eta(p.total-p.decided()), p.counts())
}

// stopWatching ends a watch the operator interrupted (Ctrl-C): that is
// not a failure, so the exit status is 0; the report is not written.
func (a *app) stopWatching(out io.Writer, tty bool) (int, error) {
	if tty {
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, "stopped watching; the workers go on (status again to see where they are)")
	return exitCompleted, nil
}

// status shows the run's progress (every watch until every row is decided,
// or once), then writes the report and the summary, and returns the exit
// status.
func (a *app) status(ctx context.Context, run, reportPath string, watch time.Duration, out io.Writer, tty bool) (int, error) {
	var (
		rows []runRow
		r    pace
	)
	for {
		var err error
		if rows, err = a.readRun(ctx, run); err == nil {
			err = a.fromTracker(ctx, rows)
		}
		if err != nil && ctx.Err() != nil && watch > 0 {
			return a.stopWatching(out, tty)
		}
		if err != nil {
			return exitStopped, err
		}
		p := progressOf(rows)
		r.now, r.done = time.Now(), p.decided()
		if r.start.IsZero() {
			r.start, r.startDone = r.now, r.done
		}
		if tty {
			fmt.Fprint(out, p.bar(r))
		} else {
			fmt.Fprint(out, p.line(run, r))
		}
		if watch == 0 || p.decided() == p.total || p.lost > 0 {
			break
		}
		t := time.NewTimer(watch)
		select {
		case <-ctx.Done():
			t.Stop()
			return a.stopWatching(out, tty)
		case <-t.C:
		}
	}
	if tty {
		fmt.Fprintln(out)
	}
	rep := reportOf(rows)
	if err := writeReport(reportPath, rep); err != nil {
		return exitStopped, err
	}
	printSummary(out, rep, reportPath)
	return exitStatus(rep), nil
}
