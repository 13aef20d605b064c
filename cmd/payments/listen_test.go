package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// wait bounds every wait of these tests: generous, for a loaded machine.
const wait = 30 * time.Second

// receiver is a local webhook endpoint: webhook.NewHandler, verifying with
// the secret the test gives it once listen has printed it. override, when
// set, answers a request instead (with a status, 0 to pass it on); it
// runs under mu, with the request's number (from 1) and body.
type receiver struct {
	*httptest.Server
	mu        sync.Mutex
	handler   http.Handler
	processed []string      // the ids the handler's function processed, in order
	headers   []http.Header // of every request
	override  func(n int, body []byte) int
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

// URL is where listen forwards to.
func (rc *receiver) URL() string { return rc.Server.URL + "/webhooks" }

// verify makes the receiver check deliveries with v.
func (rc *receiver) verify(v webhook.Verifier) {
	h := webhook.NewHandler(v, func(_ context.Context, ev *payments.Event) error {
		rc.mu.Lock()
		rc.processed = append(rc.processed, ev.ID)
		rc.mu.Unlock()
		return nil
	})
	rc.mu.Lock()
	rc.handler = h
	rc.mu.Unlock()
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.headers = append(rc.headers, r.Header.Clone())
	h, status := rc.handler, 0
	if rc.override != nil {
		status = rc.override(len(rc.headers), body) // under rc.mu
	}
	rc.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	if h == nil {
		http.Error(w, "no secret yet", http.StatusServiceUnavailable)
		return
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	h.ServeHTTP(w, r)
}

func (rc *receiver) processedIDs() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.processed...)
}

func (rc *receiver) requests() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.headers)
}

// listening is a listen command running in this process.
type listening struct {
	stdout, stderr *testlog.Buffer
	cancel         context.CancelFunc
	done           chan int
}

// startListen runs "payments listen args..." until the test ends, and
// returns once it printed its Ready line.
func startListen(t *testing.T, env map[string]string, args ...string) *listening {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &listening{stdout: new(testlog.Buffer), stderr: new(testlog.Buffer), cancel: cancel, done: make(chan int, 1)}
	go func() {
		l.done <- run(ctx, append([]string{"listen"}, args...), func(k string) string { return env[k] }, l.stdout, l.stderr)
	}()
	t.Cleanup(func() { l.stop(t) })
	l.waitFor(t, regexp.MustCompile(`(?m)^Ready: `))
	return l
}

// stop cancels the command, as Ctrl-C does, and returns its exit code.
func (l *listening) stop(t *testing.T) int {
	t.Helper()
	l.cancel()
	select {
	case code := <-l.done:
		l.done <- code // for a later call
		return code
	case <-time.After(wait):
		t.Fatalf("listen did not stop:\n%s", l.stdout)
		return -1
	}
}

// waitFor waits until a line of stdout matches re, and returns the
// matches; it fails if the command ends first.
func (l *listening) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		if m := re.FindStringSubmatch(l.stdout.String()); m != nil {
			return m
		}
		select {
		case code := <-l.done:
			l.done <- code
			t.Fatalf("listen exited %d before printing %s:\n%s\n%s", code, re, l.stdout, l.stderr)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen did not print %s:\n%s\n%s", re, l.stdout, l.stderr)
		}
	}
}

// deliveryLine matches the line of a delivery attempt of ev.
func deliveryLine(ev paymentstest.Event, url, status, suffix string) *regexp.Regexp {
	return attemptLine(ev.Type, ev.ID, url, status, suffix)
}

// attemptLine matches the line of a delivery attempt: time, type, id, the
// request and the answer, then suffix.
func attemptLine(typ payments.EventType, id, url, status, suffix string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  ` + regexp.QuoteMeta(string(typ)+"  "+id+"  --> POST "+url+" "+status) +
		` \d+ms` + regexp.QuoteMeta(suffix) + `$`)
}

var secretExport = regexp.MustCompile(`(?m)^export PAYMENTS_WEBHOOK_SECRET=(\S+)$`)

// TestListenForwardsNewEventsSigned: listen prints a new secret, forwards
// the events created after it started, in order, signed with it, one line
// each, and stops on cancel.
func TestListenForwardsNewEventsSigned(t *testing.T) {
	f := startFake(t)
	triggerEvents(t, f, payments.EventPaymentFailed) // before listen: not forwarded
	f.Advance(2 * time.Second)
	rc := newReceiver(t)
	l := startListen(t, f.env, "--forward-to", rc.URL(), "--interval", "20ms")
	secret := secretExport.FindStringSubmatch(l.stdout.String())[1]
	assert.Regexp(t, `^pssec_[0-9a-f]{48}$`, secret)
	assert.Regexp(t, `^Forwarding the events of `+regexp.QuoteMeta(f.URL())+` to `+regexp.QuoteMeta(rc.URL())+`
Signed with the Payments-Signature header and a new secret; give your receiver:

export PAYMENTS_WEBHOOK_SECRET=pssec_[0-9a-f]{48}

Ready: forwarding events created from `+regexp.QuoteMeta(f.Now().UTC().Format(time.RFC3339))+` \(the service's clock\), polling every 20ms. Ctrl-C stops.
$`, l.stdout.String())
	v, err := webhook.NewSignatureVerifier([]string{secret})
	require.NoError(t, err)
	rc.verify(v)

	evs := triggerEvents(t, f, payments.EventPaymentCompleted, payments.EventRecipientCreated, payments.EventAccountUpdated)[1:]
	for _, ev := range evs {
		l.waitFor(t, deliveryLine(ev, rc.URL(), "[200]", ""))
	}
	assert.Equal(t, []string{evs[0].ID, evs[1].ID, evs[2].ID}, rc.processedIDs(), "each event once, in order, verified")
	assert.Equal(t, 3, rc.requests())
	assert.Equal(t, exitOK, l.stop(t))
	out := strings.Split(strings.TrimSuffix(l.stdout.String(), "\n"), "\n")
	assert.Len(t, out, 6+3+1, l.stdout.String())
	assert.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  stopped$`, out[len(out)-1])
	assert.Empty(t, l.stderr.String())
}

// TestListenStandardScheme: with --scheme standard (or
// PAYMENTS_WEBHOOK_SCHEME=standard, as the sandbox exports it) the secret
// is a Standard Webhooks one, and deliveries carry webhook-id = event id.
func TestListenStandardScheme(t *testing.T) {
	for name, setting := range map[string]struct {
		env  []string
		args []string
	}{
		"flag": {nil, []string{"--scheme", "standard"}},
		"env":  {[]string{envWebhookScheme, "standard"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			f := startFake(t)
			rc := newReceiver(t)
			l := startListen(t, f.with(setting.env...), append([]string{"--forward-to", rc.URL(), "--interval", "20ms"}, setting.args...)...)
			out := l.stdout.String()
			assert.Contains(t, out, "Signed with Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) and a new secret; give your receiver:\n\n")
			assert.Contains(t, out, "\nexport PAYMENTS_WEBHOOK_SCHEME=standard\n\n")
			secret := secretExport.FindStringSubmatch(out)[1]
			assert.Regexp(t, `^whsec_[A-Za-z0-9+/]{43}=$`, secret)
			v, err := webhook.NewStandardVerifier([]string{secret})
			require.NoError(t, err)
			rc.verify(v)

			ev := triggerEvents(t, f, payments.EventVirtualAccountCreated)[0]
			l.waitFor(t, deliveryLine(ev, rc.URL(), "[200]", ""))
			assert.Equal(t, []string{ev.ID}, rc.processedIDs())
			rc.mu.Lock()
			assert.Equal(t, ev.ID, rc.headers[0].Get(webhook.StandardIDHeader))
			assert.Empty(t, rc.headers[0].Get(webhook.SignatureHeader))
			rc.mu.Unlock()
		})
	}
}

// TestListenReusesASecret: a secret from PAYMENTS_WEBHOOK_SECRET (all of a
// comma-separated list sign) or --secret is used and never printed.
func TestListenReusesASecret(t *testing.T) {
	f := startFake(t)
	const old, current, flagged = "whsec_old_0123", "whsec_current_4567", "whsec_flag_89ab"
	for _, tc := range []struct {
		args       []string
		from, want string
	}{
		{nil, "PAYMENTS_WEBHOOK_SECRET", old},
		{nil, "PAYMENTS_WEBHOOK_SECRET", current},
		{[]string{"--secret", flagged}, "--secret", flagged},
	} {
		rc := newReceiver(t)
		v, err := webhook.NewSignatureVerifier([]string{tc.want})
		require.NoError(t, err)
		rc.verify(v)
		l := startListen(t, f.with(envWebhookSecret, old+","+current), append([]string{"--forward-to", rc.URL(), "--interval", "20ms"}, tc.args...)...)
		ev := triggerEvents(t, f, payments.EventPaymentCompleted)
		l.waitFor(t, deliveryLine(ev[len(ev)-1], rc.URL(), "[200]", ""))
		assert.Equal(t, exitOK, l.stop(t))
		out := l.stdout.String()
		assert.Contains(t, out, "\nSigned with the Payments-Signature header and the secret of "+tc.from+"\nReady: ")
		for _, s := range []string{old, current, flagged, "export "} {
			assert.NotContains(t, out+l.stderr.String(), s)
		}
	}

	// A secret that is not one of the scheme's: exit 2, and the secret is
	// not repeated.
	code, stdout, stderr := runCLI(t, f.env, "listen", "--forward-to", "http://127.0.0.1:1/", "--scheme", "standard", "--secret", "deadbeefcafe0123")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "payments: --scheme standard needs Standard Webhooks secrets (whsec_ and base64; without a secret, listen makes one), but in --secret, secret 0 is hex, the form of a Payments-Signature secret: a Standard Webhooks secret is whsec_ followed by base64 (use a SignatureVerifier for this one): give this endpoint's signing secret, as the service's dashboard shows it (an unset environment variable gives an empty one)\n", stderr)
}

// TestListenSince: --since replays from a time; a duration counts back
// from the service's clock (the Date header), not this machine's.
func TestListenSince(t *testing.T) {
	f := startFake(t)
	f.Advance(time.Hour)                                // the fake's clock an hour ahead of this machine's
	triggerEvents(t, f, payments.EventPaymentInitiated) // at local + 1h
	f.Advance(2 * time.Hour)
	evs := triggerEvents(t, f, payments.EventPaymentCompleted) // at local + 3h

	for since, want := range map[string][]paymentstest.Event{
		"1h": evs[1:], // from local + 2h by the service's clock; from local - 1h by this machine's
		evs[0].CreatedAt.UTC().Format(time.RFC3339): evs,
	} {
		rc := newReceiver(t)
		rc.override = func(int, []byte) int { return http.StatusNoContent }
		l := startListen(t, f.env, "--forward-to", rc.URL(), "--interval", "20ms", "--since", since)
		for _, ev := range want {
			l.waitFor(t, deliveryLine(ev, rc.URL(), "[204]", ""))
		}
		// One poll more, then count.
		before := len(f.Requests())
		require.Eventually(t, func() bool { return len(f.Requests()) > before+1 }, wait, 5*time.Millisecond)
		assert.Equal(t, len(want), rc.requests(), since)
		assert.Equal(t, exitOK, l.stop(t))
	}
}

// TestListenListFailuresAndAForgottenCursor: a list that fails is said
// once, and so is its recovery; a cursor the service forgot (its log rolled
// over) makes listen list again from the last event's time, skipping what
// it forwarded.
func TestListenListFailuresAndAForgottenCursor(t *testing.T) {
	f := startFake(t, paymentstest.WithSandbox(paymentstest.Sandbox{LogLimit: 2}))
	rc := newReceiver(t)
	rc.override = func(int, []byte) int { return http.StatusOK }
	l := startListen(t, f.env, "--forward-to", rc.URL(), "--interval", "20ms")
	e1 := triggerEvents(t, f, payments.EventPaymentCompleted)[0]
	l.waitFor(t, deliveryLine(e1, rc.URL(), "[200]", ""))

	require.NoError(t, f.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 1000, Method: http.MethodGet, Path: "/webhooks/events"}))
	l.waitFor(t, regexp.MustCompile(`(?m)  listing events failed, trying again every poll: payments: HTTP 503 Service Unavailable: .*stan=.*\) after 3 attempt\(s\)$`))
	evs := triggerEvents(t, f, payments.EventPaymentFailed, payments.EventPaymentRejected, payments.EventAccountUpdated) // e1 leaves the log
	f.ClearFaults()
	l.waitFor(t, regexp.MustCompile(`(?m)  listing events works again\n.*  the service no longer knows event `+e1.ID+`; listing again from `+regexp.QuoteMeta(e1.CreatedAt.UTC().Format(time.RFC3339))+`$`))
	l.waitFor(t, deliveryLine(evs[0], rc.URL(), "[200]", ""))
	l.waitFor(t, deliveryLine(evs[1], rc.URL(), "[200]", ""))
	assert.Equal(t, 3, rc.requests(), "e1 is not forwarded again")
	assert.Equal(t, 1, strings.Count(l.stdout.String(), "listing events failed"))
}

// A service whose cursors cycle (evt-2, evt-4, evt-2 again) ends a poll with
// payments.ErrEventCursorCycle, said once; each event is forwarded once. The
// poll used to list for ever, a request per page.
func TestListenStopsAPollWhenTheCursorsCycle(t *testing.T) {
	page := func(from, to int) string {
		var evs []string
		for n := from; n <= to; n++ {
			evs = append(evs, fmt.Sprintf(`{"id":"evt-%d","event":"payment.completed","created_at":"2025-01-31T09:00:0%dZ","data":{}}`, n, n))
		}
		return `{"success":true,"message":"ok","stan":"0b6c3e0c-5c5e-4bb5-9b8e-6f1f3c1d2a10","data":{"events":[` + strings.Join(evs, ",") + `],"has_more":true}}`
	}
	pages := map[string]string{"": page(1, 2), "evt-2": page(3, 4), "evt-4": page(1, 2)}
	var lists atomic.Int64
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lists.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, pages[r.URL.Query().Get("after")])
	}))
	defer svc.Close()
	rc := newReceiver(t)
	rc.override = func(int, []byte) int { return http.StatusOK }
	client, err := payments.NewClient("sk_test_cycle", payments.WithBaseURL(svc.URL))
	require.NoError(t, err)
	sign, err := newSigner(schemePayments, []string{"whsec_cycle"}, "--secret")
	require.NoError(t, err)
	var stdout strings.Builder
	out := &lines{w: &stdout, now: time.Now}
	fwd := newForwarder(rc.URL(), sign, nil, out)
	p := &poller{client: client, fwd: fwd, out: out, seen: newIDSet(recentIDs)}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 2 {
		done := make(chan struct{})
		go func() { p.poll(ctx); close(done) }()
		select {
		case <-done:
		case <-time.After(wait):
			cancel()
			<-done
			t.Fatalf("the poll did not end: %d list requests", lists.Load())
		}
	}
	fwd.stop()
	assert.EqualValues(t, 3+2, lists.Load(), "3 pages, then 2 from the cursor evt-2: no request after a repeated cursor")
	assert.Equal(t, 1, strings.Count(stdout.String(), "listing events failed, trying again every poll: payments: malformed response: the page after event evt-4 ends at event evt-2, already listed after: "+payments.ErrEventCursorCycle.Error()), stdout.String())
	assert.Equal(t, 4, rc.requests(), "each event forwarded once")
}

// A plain http --forward-to to a host that is not loopback would send the
// events (payment data) across the network in clear text: refused, exit 2,
// nothing listed, unless --insecure-plain-http says so. The SDK's
// PAYMENTS_INSECURE_PLAIN_HTTP=1 (about the base URL) does not allow it.
func TestListenRefusesPlainHTTPToAnotherHost(t *testing.T) {
	f := startFake(t)
	for _, tc := range []struct{ target, shown string }{
		{"http://10.0.0.5:8080/webhooks", "http://10.0.0.5:8080/webhooks"},
		{"http://receiver:8080/webhooks", "http://receiver:8080/webhooks"},
		{"http://ops:hunter2@203.0.113.9/hook", "http://ops:xxxxx@203.0.113.9/hook"},
		{"http://localhost.example.com/", "http://localhost.example.com/"},
		{"http://localhost.:8080/", "http://localhost.:8080/"},
		{"http://localhoſt:8080/", "http://localho%C5%BFt:8080/"},
		{"http://0.0.0.0:8080/", "http://0.0.0.0:8080/"},
	} {
		for _, env := range []map[string]string{f.env, f.with(envInsecureHTTP, "1")} {
			before := len(f.Requests())
			code, stdout, stderr := runCLI(t, env, "listen", "--forward-to", tc.target)
			assert.Equal(t, exitUsage, code, tc.target)
			assert.Empty(t, stdout)
			assert.Equal(t, "payments: --forward-to "+tc.shown+" is plain http to a host that is not loopback: "+
				"the events would cross the network in clear text. Use https, or pass --insecure-plain-http (a private network you trust only)\n", stderr)
			assert.NotContains(t, stderr, "hunter2")
			assert.Len(t, f.Requests(), before, "%s: nothing is listed", tc.target)
		}
	}

	c := &cli{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	for _, args := range [][]string{
		{"--forward-to", "https://10.0.0.5:8443/webhooks"},
		{"--forward-to", "http://localhost:8080/webhooks"},
		{"--forward-to", "http://LOCALHOST:8080/webhooks"},
		{"--forward-to", "http://127.0.0.2:8080/webhooks"},
		{"--forward-to", "http://[::1]:8080/webhooks"},
		{"--forward-to", "http://10.0.0.5:8080/webhooks", "--insecure-plain-http"},
	} {
		cfg, err := c.listenConfig(args)
		require.NoError(t, err, args)
		assert.Equal(t, args[1], cfg.target)
	}
}
