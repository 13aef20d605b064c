//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/webhook"
)

// TestListenForwardsIntoTheQueue runs what a developer runs on their
// machine before deploying (docs/webhooks.md): the sandbox, "payments
// listen --forward-to" this example's receiver, a worker, and a payment.
// The receiver answers 500 to the first delivery of each event after it
// enqueued it, as when the answer is lost, so listen delivers every event
// twice: each is booked once all the same, and every job completes.
func TestListenForwardsIntoTheQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the sandbox and the payments command; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command to build the sandbox and the payments command")
	}
	dir := t.TempDir()
	sandboxBin := buildProgram(t, dir, "github.com/paymentsapi/payments-go/cmd/payments-sandbox")
	cliBin := buildProgram(t, dir, "github.com/paymentsapi/payments-go/cmd/payments")

	sandbox := runProgram(t, programEnv(), sandboxBin, "-addr", "127.0.0.1:0", "-quiet", "-webhook-url", "none")
	baseURL := sandbox.waitFor(t, regexp.MustCompile(`(?m)^export PAYMENTS_BASE_URL=(\S+)$`))[1]
	apiKey := sandbox.waitFor(t, regexp.MustCompile(`(?m)^export PAYMENTS_API_KEY=(\S+)$`))[1]

	// The receiver is there before listen starts; its handler once listen
	// printed the secret it signs with.
	var (
		mu      sync.Mutex
		handler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
		seen                 = map[string]int{} // deliveries of each event id
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handler
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer receiver.Close()

	env := append(programEnv(), "PAYMENTS_BASE_URL="+baseURL, "PAYMENTS_API_KEY="+apiKey)
	listen := runProgram(t, env, cliBin, "listen", "--forward-to", receiver.URL+"/webhooks", "--interval", "200ms", "--retries", "1s,2s,4s")
	listen.waitFor(t, regexp.MustCompile(`(?m)^Ready: `))
	secret := listen.waitFor(t, regexp.MustCompile(`(?m)^export PAYMENTS_WEBHOOK_SECRET=(\S+)$`))[1]

	a := process(t, testDB(t), pause(callTime))
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	mux, h := a.receiver(verifier)
	defer func() { _ = h.Shutdown(context.Background()) }()
	mu.Lock()
	handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		var ev struct{ ID string }
		_ = json.Unmarshal(body, &ev)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		mu.Lock()
		seen[ev.ID]++
		first := seen[ev.ID] == 1
		mu.Unlock()
		if first && rec.Code == http.StatusOK {
			w.WriteHeader(http.StatusInternalServerError) // enqueued, but the answer is "lost"
			return
		}
		w.WriteHeader(rec.Code)
	})
	mu.Unlock()

	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL))
	if err != nil {
		t.Fatal(err)
	}
	startWorker(t, a, client, time.Hour)
	p := pay(t, client, "Zahlung-Müller-42", "2500.00")

	// Every event, as the service lists it, once the payment is final.
	ids, final := serviceEvents(t, client, p.ID)
	for deadline := time.Now().Add(time.Minute); !final; ids, final = serviceEvents(t, client, p.ID) {
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox listed no final event of payment %s in a minute: %v", p.ID, ids)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Each event's second delivery is answered before the count, so that a
	// duplicate that booked again would show.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		again, counts := 0, fmt.Sprint(seen)
		for _, id := range ids {
			if seen[id] >= 2 {
				again++
			}
		}
		mu.Unlock()
		if again == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen delivered %d of %d events again after the 500 within a minute: %s", again, len(ids), counts)
		}
	}
	checkOnce(t, a, ids, waitBooked(t, a, ids))
	var status string
	if err := a.pool.QueryRow(context.Background(), `SELECT status FROM orders WHERE reference = $1`, "Zahlung-Müller-42").Scan(&status); err != nil {
		t.Fatalf("the order of Zahlung-Müller-42: %v", err)
	}
	if status != string(payments.PaymentStatusCompleted) {
		t.Errorf("the order of Zahlung-Müller-42 is %s, want %s", status, payments.PaymentStatusCompleted)
	}
	if strings.Contains(listen.stdout.String(), apiKey) || strings.Contains(listen.stderr.String(), apiKey) {
		t.Error("listen printed the API key")
	}
}

// serviceEvents lists the ids of the sandbox's events (this test's alone),
// and whether one of them completed payment id.
func serviceEvents(t *testing.T, client *payments.Client, id string) (ids []string, final bool) {
	t.Helper()
	for ev, err := range client.Webhooks.ListEvents(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ev.ID)
		if p, err := ev.Payment(); err == nil && p.ID == id {
			final = final || p.Status == payments.PaymentStatusCompleted
		}
	}
	return ids, final
}

// program is a program this test started; it is interrupted when the test
// ends, and killed 20 s later.
type program struct {
	cmd            *exec.Cmd
	stdout, stderr *testlog.Buffer
	exited         chan struct{}
}

func runProgram(t *testing.T, env []string, bin string, args ...string) *program {
	t.Helper()
	p := &program{cmd: exec.Command(bin, args...), stdout: new(testlog.Buffer), stderr: new(testlog.Buffer), exited: make(chan struct{})}
	p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = env, p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// waitFor waits a minute at most for stdout to match re, and returns the
// match.
func (p *program) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(p.stdout.String()); m != nil {
			return m
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before printing %s:\n%s\n%s", filepath.Base(p.cmd.Path), re, p.stdout, p.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %s:\n%s\n%s", filepath.Base(p.cmd.Path), re, p.stdout, p.stderr)
		}
	}
}

func buildProgram(t *testing.T, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// programEnv is this environment without PAYMENTS_ variables and proxies.
func programEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "PAYMENTS_") && !strings.HasSuffix(strings.ToLower(name), "_proxy") {
			env = append(env, kv)
		}
	}
	return env
}
