package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// childArgs, in a test binary's environment, makes it run the example with
// these space-separated arguments instead of the tests (TestMain).
const childArgs = "PG_QUEUE_EXAMPLE_ARGS"

// child is a process of the example, run from the test binary.
type child struct {
	cmd  *exec.Cmd
	log  string        // its stdout and stderr
	done chan struct{} // closed when it exited; then err is its exit
	err  error
}

// startChild starts "pg-queue args..." on dbURL, with the service's client
// unset, as a process of its own; the test kills it at its end.
func startChild(t *testing.T, dbURL string, args ...string) *child {
	t.Helper()
	c := &child{log: filepath.Join(t.TempDir(), "pg-queue.log"), done: make(chan struct{})}
	f, err := os.Create(c.log)
	if err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(os.Environ(), childArgs+"="+strings.Join(args, " "), "DATABASE_URL="+dbURL, "PAYMENTS_API_KEY=")
	c.cmd.Stdout, c.cmd.Stderr = f, f
	if err := c.cmd.Start(); err != nil {
		_ = f.Close()
		t.Fatal(err)
	}
	go func() {
		c.err = c.cmd.Wait()
		_ = f.Close()
		close(c.done)
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.done
		if t.Failed() {
			out, _ := os.ReadFile(c.log)
			t.Logf("pg-queue %s said:\n%s", strings.Join(args, " "), out)
		}
	})
	return c
}

// waitRunning waits (a minute at most) until some event job is running,
// and returns the ids of the running ones.
func waitRunning(t *testing.T, a *app) map[int64]bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		running := map[int64]bool{}
		for _, j := range eventJobs(t, a) {
			if j.State == rivertype.JobStateRunning {
				running[j.ID] = true
			}
		}
		if len(running) > 0 {
			return running
		}
		if time.Now().After(deadline) {
			t.Fatal("no event job started running within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// deliver posts ev to the receiver at base as the service would deliver
// it again: the same body, signed now. It returns the answer's status.
func deliver(t *testing.T, base string, ev paymentstest.Event) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/webhooks", bytes.NewReader(ev.Body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(ev.Body, time.Now(), secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// The trial of issue 46, with the default settings: a receiver, and a
// worker process (pg-queue work -call-time 3s) SIGKILLed while it runs
// jobs, with a duplicate of every event delivered while they are in
// flight. A worker started after the kill books every event exactly once
// within two minutes of it (the documented rescue: RescueAfter, 1 minute
// after the run began; River's rescuer looks every 30 s), and every event
// delivered again once booked (late) is answered 200 and adds no job and
// no row.
func TestWorkerKilledMidJobEveryEventBookedOnceWithinTwoMinutes(t *testing.T) {
	dbURL := testDB(t)
	receiving := process(t, dbURL, nil)
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	mux, h := receiving.receiver(verifier)
	receiver := httptest.NewServer(mux)
	defer receiver.Close()
	defer func() { _ = h.Shutdown(context.Background()) }()
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL + "/webhooks", Secrets: []string{secret}}))
	defer srv.Close()
	client := srv.Client()

	killed := startChild(t, dbURL, "work", "-call-time", "3s", "-reconcile-every", "0")
	for i := range 3 {
		pay(t, client, fmt.Sprintf("order-%d", 20+i), "2500.00")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.WaitForDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range srv.Events() {
		ids = append(ids, ev.ID)
		if code := deliver(t, receiver.URL, ev); code != http.StatusOK {
			t.Errorf("a duplicate of %s answered %d, want 200", ev.ID, code)
		}
	}
	waitRunning(t, receiving)
	if err := killed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	<-killed.done
	stranded := 0
	for _, j := range eventJobs(t, receiving) {
		if j.State == rivertype.JobStateRunning {
			stranded++
		}
	}
	if stranded == 0 {
		t.Fatal("the worker was killed with no job running: the test killed it too late to try the rescue")
	}

	var c calls
	working := process(t, dbURL, c.fn())
	startWorker(t, working, nil, 0)
	checkOnce(t, working, ids, waitBookedBy(t, working, ids, killedAt.Add(2*time.Minute)))

	for _, ev := range srv.Events() {
		if code := deliver(t, receiver.URL, ev); code != http.StatusOK {
			t.Errorf("a late delivery of %s answered %d, want 200", ev.ID, code)
		}
	}
	if jobs := len(eventJobs(t, working)); jobs != len(ids) {
		t.Errorf("%d event jobs after every event came again, want %d", jobs, len(ids))
	}
	checkOnce(t, working, ids, waitBooked(t, working, ids))
}

// A worker process stopped by SIGTERM (Ctrl-C, a deploy) mid-job lets the
// functions it runs finish and commit before it exits 0: each job that was
// running completes at its first attempt, its event booked once, with no
// other worker to run it again.
func TestWorkerStoppedBySIGTERMFinishesItsRunningFunctions(t *testing.T) {
	dbURL := testDB(t)
	a := process(t, dbURL, nil)
	srv := paymentstest.NewServer()
	defer srv.Close()
	pay(t, srv.Client(), "order-30", "2500.00")

	stopped := startChild(t, dbURL, "work", "-call-time", "3s", "-reconcile-every", "0")
	for _, e := range srv.Events() {
		ev, err := payments.ParseEvent(e.Body)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.queue.Enqueue(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	running := waitRunning(t, a)
	if err := stopped.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the worker did not exit within two minutes of SIGTERM (it waits a minute at most for its functions)")
	}
	if stopped.err != nil {
		t.Errorf("the worker exited with %v after SIGTERM, want 0", stopped.err)
	}
	booked := bookedCounts(t, a)
	for _, j := range eventJobs(t, a) {
		if !running[j.ID] {
			continue
		}
		var args pgstore.EventArgs
		if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
			t.Fatal(err)
		}
		if j.State != rivertype.JobStateCompleted || j.Attempt != 1 || booked[args.ID] != 1 {
			t.Errorf("the job of event %s, running at SIGTERM: %s at attempt %d, booked %d times; want completed at the first attempt, booked once",
				args.ID, j.State, j.Attempt, booked[args.ID])
		}
	}
}
