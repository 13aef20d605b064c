//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/readmecheck"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// envelope is an answer of the sandbox as curl prints it.
type envelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// TestREADMESandboxSection walks the README's section about the sandbox as
// a reader would, in three terminals: it starts the sandbox and the example
// receiver with the README's commands, pastes the export lines the sandbox
// prints, and runs the README's curl lines through bash. Only the two ports
// are changed, to free ones. Every webhook must reach the receiver and pass
// its signature check, after the clock was moved past the signature
// tolerance.
func TestREADMESandboxSection(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the sandbox and the receiver")
	}
	for _, tool := range []string{"bash", "curl", "go", "grep", "cut"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the README's commands need %s", tool)
		}
	}
	sec := readmeSection(t)
	steps := sortSteps(t, shellBlocks(sec))

	// The commands spell out the defaults, so that the pair also meets
	// without them.
	args := shellWords(t, strings.TrimPrefix(steps.sandbox, sandboxCommand))
	assert.Equal(t, defaultAddr, flagValue(args, "addr"), "the README's -addr is the default")
	assert.Equal(t, defaultWebhookURL, flagValue(args, "webhook-url"), "the README's -webhook-url is the default")
	receiverSrc, err := os.ReadFile("../../examples/webhook-receiver/main.go")
	require.NoError(t, err)
	m := regexp.MustCompile(`const defaultAddr = "([^"]*)"`).FindSubmatch(receiverSrc)
	require.NotNil(t, m, "the receiver's default address")
	require.Contains(t, steps.receiver, "PAYMENTS_WEBHOOK_ADDR="+string(m[1])+" ",
		"the receiver line spells out its default address, so the test can move it")
	require.True(t, strings.HasSuffix(defaultWebhookURL, ":"+readmeReceiverPort+"/webhooks"))
	for _, port := range []string{readmeSandboxPort, readmeReceiverPort} {
		require.Contains(t, sec, ":"+port, "the section spells out port %s", port)
	}
	var curls int
	for _, b := range steps.session {
		for _, c := range commandLines(b) {
			for _, part := range strings.Split(c, "curl ")[1:] {
				curls++
				assert.True(t, strings.HasPrefix(part, "-sS "), "curl without -sS: %s", c)
			}
		}
	}
	session := strings.Join(steps.session, "\n")
	for _, call := range []string{"/accounts/virtual-accounts", "/_sandbox/clock/advance", "/incoming-payments",
		"/_sandbox/deliveries/wait", "-X PUT \"$PAYMENTS_BASE_URL/_sandbox/webhook-url\""} {
		require.Contains(t, session, call, "the README's walk-through calls %s", call)
	}

	free := freePorts(t, 2)
	sandboxPort, receiverPort := free[0], free[1]
	ports := strings.NewReplacer(":"+readmeSandboxPort, ":"+sandboxPort, ":"+readmeReceiverPort, ":"+receiverPort)
	dir := t.TempDir()
	sandboxBin := buildCommand(t, dir, "github.com/paymentsapi/payments-go/cmd/payments-sandbox")
	receiverBin := buildCommand(t, dir, "github.com/paymentsapi/payments-go/examples/webhook-receiver")
	env := childEnv()

	// Terminal 1: the sandbox, and the lines it prints.
	line := strings.Replace(ports.Replace(steps.sandbox), sandboxCommand, shellQuote(sandboxBin), 1)
	sbOut, sbErr, sbExited := startScript(t, line, env)
	waitFor(t, "the sandbox", sbOut, sbErr, sbExited, "Press Ctrl+C")
	printed := exportLines(sbOut.String())
	require.Len(t, printed, len(steps.exports), "the README shows the export lines the sandbox prints:\n%s", sbOut)
	for i, want := range steps.exports {
		want = ports.Replace(want)
		if prefix, ok := strings.CutSuffix(want, "..."); ok {
			assert.True(t, strings.HasPrefix(printed[i], prefix), "printed %q, README shows %q", printed[i], want)
		} else {
			assert.Equal(t, want, printed[i])
		}
	}
	exports := strings.Join(printed, "\n") + "\n"

	// Terminal 2: the receiver, with the export lines pasted.
	line = strings.Replace(ports.Replace(steps.receiver), receiverCommand, shellQuote(receiverBin), 1)
	rcOut, rcErr, rcExited := startScript(t, exports+line, env)
	waitFor(t, "the receiver", rcOut, rcErr, rcExited, `"msg":"listening"`)

	// Terminal 3: the curl lines, with the export lines pasted. -e and
	// pipefail make any failing command fail the test.
	var out, errOut bytes.Buffer
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+exports+ports.Replace(session))
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &errOut
	require.NoError(t, cmd.Run(), "the README's curl lines:\nstdout: %s\nstderr: %s", &out, &errOut)
	assert.Empty(t, errOut.String(), "curl -sS printed errors")

	// Every answer curl printed is a success; the wait lists the
	// deliveries.
	var answers []envelope
	dec := json.NewDecoder(&out)
	for {
		var e envelope
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err, "curl printed something other than JSON answers")
		}
		assert.True(t, e.Success, "an answer failed: %s %s", e.Message, e.Data)
		answers = append(answers, e)
	}
	assert.Len(t, answers, curls-1, "one answer per curl, except the one kept in $ACCOUNT")
	var waited *deliveryLog
	for _, e := range answers {
		var d deliveryLog
		if json.Unmarshal(e.Data, &d) == nil && d.Deliveries != nil {
			waited = &d
		}
	}
	require.NotNil(t, waited, "no answer listed the deliveries:\n%s", out.String())
	assert.Zero(t, waited.Pending)

	// The sandbox's final log: every event delivered once, first time, and
	// processed by the receiver, which runs only on a verified signature.
	final := sandboxDeliveries(t, printed)
	kinds := map[string]bool{}
	receiverLog := rcOut.String()
	hookURL := "http://localhost:" + receiverPort + "/webhooks"
	for _, d := range final.Deliveries {
		kinds[d.Event] = true
		assert.Equal(t, hookURL, d.URL)
		assert.Equal(t, "delivered", d.Status, "%s %s", d.Event, d.EventID)
		if assert.Len(t, d.Attempts, 1, "%s: accepted on the first attempt", d.Event) {
			assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
		}
		assert.Contains(t, receiverLog, `"event_id":"`+d.EventID+`"`, "the receiver processed %s", d.Event)
		if d.Event == "virtual_account.payment_received" {
			assert.Greater(t, time.Until(d.CreatedAt), 4*time.Minute,
				"the payment came after the clock moved 5 minutes ahead, yet verified")
		}
	}
	for _, k := range []string{"virtual_account.created", "virtual_account.payment_received"} {
		assert.True(t, kinds[k], "the walk-through produced %s: %v", k, kinds)
	}
	assert.Len(t, final.Deliveries, len(waited.Deliveries), "no delivery after the wait")
	for _, level := range []string{`"level":"WARN"`, `"level":"ERROR"`} {
		assert.NotContains(t, receiverLog, level, "the receiver refused or failed something")
	}
}

// sandboxDeliveries reads the delivery log with the printed variables.
func sandboxDeliveries(t *testing.T, exports []string) deliveryLog {
	t.Helper()
	out, err := exec.Command("bash", "-c", strings.Join(exports, "\n")+
		"\nprintf '%s\\n%s' \"$PAYMENTS_BASE_URL\" \"$PAYMENTS_API_KEY\"").Output()
	require.NoError(t, err)
	baseURL, key, _ := strings.Cut(string(out), "\n")
	req, err := http.NewRequest(http.MethodGet, baseURL+"/_sandbox/deliveries", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var e envelope
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	require.True(t, e.Success, e.Message)
	var d deliveryLog
	require.NoError(t, json.Unmarshal(e.Data, &d))
	return d
}

// The guide of the dashboard, whose command lines
// TestREADMESandboxDashboardCommands checks, and the prefixes of its lines
// that name the payments command and the screenshot's refresh.
const (
	dashboardGuide     = "../../docs/sandbox-dashboard.md"
	paymentsCommand    = "go run ./cmd/payments "
	screenshotCommand  = "cd e2e/dashboard && "
	paymentsGuideTest  = "TestREADMESandboxDashboardEventsCommands"
	paymentsGuideTests = "../payments/readme_test.go"
)

// notShell matches what a command line must not hold for shellWords, which
// runs it through bash.
var notShell = regexp.MustCompile("[$`;&|<>()]")

// TestREADMESandboxDashboardCommands checks every command line of the sh
// blocks of docs/sandbox-dashboard.md, and fails on a line it has no check
// for:
//
//   - the sandbox's lines start the sandbox with the guide's flags (on a
//     free port, deliveries off): it prints the dashboard's address as the
//     guide shows it, the port aside, and its admin API reports the
//     delivery chaos the flags ask for;
//   - the curl line runs through bash, after the export lines the sandbox
//     prints, with PAYMENT_ID a payment pending after its confirm: it is
//     settled as the line's body says;
//   - the screenshot's line names a module whose tests read the variable it
//     sets, the path it gives is the image the guide shows, and its -run
//     selects tests there (go test -list: nothing runs, nothing is written);
//   - the payments lines are run by TestREADMESandboxDashboardEventsCommands
//     in cmd/payments.
func TestREADMESandboxDashboardCommands(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the guide's commands need %s", tool)
		}
	}
	md, err := os.ReadFile(dashboardGuide)
	require.NoError(t, err)
	blocks, err := readmecheck.Blocks(string(md))
	require.NoError(t, err)
	var dashboardLine string // the output the guide shows
	for _, b := range blocks {
		if b.Lang == "" && strings.HasPrefix(b.Code, "Dashboard: ") {
			dashboardLine = strings.TrimSuffix(b.Code, "\n")
		}
	}
	require.Contains(t, dashboardLine, "http://"+defaultAddr+"/", "the guide shows the dashboard's address at the default address")

	var lines, paymentsLines int
	for _, code := range readmecheck.Code(string(md), "sh") {
		for _, line := range commandLines(code) {
			lines++
			switch {
			case line == sandboxCommand || strings.HasPrefix(line, sandboxCommand+" "):
				checkDashboardSandboxLine(t, line, dashboardLine)
			case strings.HasPrefix(line, paymentsCommand):
				paymentsLines++ // cmd/payments runs them
			case strings.HasPrefix(line, "curl "):
				checkDashboardCurlLine(t, line)
			case strings.HasPrefix(line, screenshotCommand):
				checkDashboardScreenshotLine(t, line, string(md))
			default:
				t.Errorf("docs/sandbox-dashboard.md: no test checks %q: give it one in TestREADMESandboxDashboardCommands", line)
			}
		}
	}
	require.NotZero(t, lines, "no command line in docs/sandbox-dashboard.md: the block parser is broken")
	if paymentsLines > 0 {
		src, err := os.ReadFile(paymentsGuideTests)
		require.NoError(t, err)
		assert.True(t, strings.Contains(string(src), "\nfunc "+paymentsGuideTest+"(t *testing.T) {"),
			"%s has %s, which runs the guide's %q lines", paymentsGuideTests, paymentsGuideTest, strings.TrimSpace(paymentsCommand))
	}
}

// checkDashboardSandboxLine starts the sandbox with the flags of line.
func checkDashboardSandboxLine(t *testing.T, line, dashboardLine string) {
	t.Helper()
	require.NotRegexp(t, notShell, line)
	var args []string
	if rest := strings.TrimPrefix(line, sandboxCommand); strings.TrimSpace(rest) != "" && !strings.HasPrefix(strings.TrimSpace(rest), "#") {
		args = shellWords(t, rest)
	}
	// Later flags win: only the address and the deliveries change.
	baseURL, apiKey, stdout := runUntilReady(t, line, append(args, "-addr", "127.0.0.1:0", "-webhook-url", "none", "-quiet")...)
	u, err := url.Parse(baseURL)
	require.NoError(t, err)
	printed := regexp.MustCompile(`(?m)^Dashboard: .*$`).FindString(stdout)
	assert.Equal(t, strings.Replace(dashboardLine, defaultAddr, u.Host, 1), printed,
		"%s prints the dashboard's address as the guide shows it, the port aside", line)

	status, data := adminCall(t, baseURL, apiKey, http.MethodGet, "/_sandbox/delivery-chaos", "")
	require.Equal(t, http.StatusOK, status)
	var got deliveryChaos
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Equal(t, chaosFlags(t, args), got, line)
}

// runUntilReady runs the sandbox with args until the test ends, and returns
// its URL, API key and what it printed once it is ready. It fails at once
// when the sandbox stops instead (a flag of line that it refuses).
func runUntilReady(t *testing.T, line string, args ...string) (baseURL, apiKey, stdout string) {
	t.Helper()
	out := &readyWriter{marker: "Press Ctrl+C", ready: make(chan struct{})}
	var stderr testlog.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, noEnv, out, &stderr, serverTimeouts()) }()
	select {
	case <-out.ready:
		t.Cleanup(func() {
			cancel()
			require.NoError(t, <-done)
		})
	case err := <-done:
		cancel()
		t.Fatalf("%s: the sandbox stopped: %v\n%s", line, err, &stderr)
	}
	printed := out.String()
	return baseURLLine.FindStringSubmatch(printed)[1], apiKeyLine.FindStringSubmatch(printed)[1], printed
}

// readyWriter keeps what is written, and closes ready once it holds marker.
type readyWriter struct {
	testlog.Buffer
	marker string
	once   sync.Once
	ready  chan struct{}
}

func (w *readyWriter) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if strings.Contains(w.Buffer.String(), w.marker) {
		w.once.Do(func() { close(w.ready) })
	}
	return n, err
}

// deliveryChaos is the data of GET /_sandbox/delivery-chaos.
type deliveryChaos struct {
	Delay       string `json:"delay"`
	Duplicate   bool   `json:"duplicate"`
	NewestFirst bool   `json:"newest_first"`
}

// chaosFlags returns the delivery chaos that the sandbox's flags args ask
// for.
func chaosFlags(t *testing.T, args []string) deliveryChaos {
	t.Helper()
	c := deliveryChaos{Delay: "0s"}
	for i, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "deliver-late":
			if !hasValue {
				require.Less(t, i+1, len(args), "-deliver-late takes a duration")
				value = args[i+1]
			}
			d, err := time.ParseDuration(value)
			require.NoError(t, err)
			c.Delay = d.String()
		case "deliver-twice":
			c.Duplicate = !hasValue || value == "true"
		case "deliver-newest-first":
			c.NewestFirst = !hasValue || value == "true"
		}
	}
	return c
}

// checkDashboardCurlLine runs the curl line against a sandbox holding a
// payment pending after its confirm.
func checkDashboardCurlLine(t *testing.T, line string) {
	t.Helper()
	require.Contains(t, line, "PAYMENT_ID", "the curl line settles a payment")
	body := regexp.MustCompile(` -d '([^']*)'`).FindStringSubmatch(line)
	require.NotNil(t, body, "the curl line sends a body: %s", line)
	var want struct{ Status string }
	require.NoError(t, json.Unmarshal([]byte(body[1]), &want))

	baseURL, apiKey, stdout := runUntilReady(t, line, "-addr", "127.0.0.1:0", "-webhook-url", "none", "-quiet", "-processing-delay", "24h")
	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL))
	require.NoError(t, err)
	defer client.Close()
	ctx := context.Background()
	r := sandboxRecipient(t, client)
	p, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: decimal.RequireFromString(paymentstest.AmountCompletesLate)},
		Currency: "NGN", RecipientID: r.ID, Reference: "order-late"})
	require.NoError(t, err)
	p, err = client.Payments.Confirm(ctx, p.ConfirmParams())
	require.NoError(t, err)
	require.Equal(t, payments.PaymentStatusPending, p.Status)

	var out, errOut bytes.Buffer
	script := "set -euo pipefail\n" + strings.Join(exportLines(stdout), "\n") + "\n" + strings.ReplaceAll(line, "PAYMENT_ID", p.ID)
	cmd := exec.Command("bash", "-c", script)
	cmd.Env, cmd.Stdout, cmd.Stderr = childEnv(), &out, &errOut
	require.NoError(t, cmd.Run(), "%s\nstdout: %s\nstderr: %s", line, &out, &errOut)
	var answer envelope
	require.NoError(t, json.Unmarshal(out.Bytes(), &answer), "curl printed %q", &out)
	require.True(t, answer.Success, "%s: %s %s", line, answer.Message, answer.Data)
	var settled struct{ ID, Status string }
	require.NoError(t, json.Unmarshal(answer.Data, &settled))
	assert.Equal(t, p.ID, settled.ID)
	assert.Equal(t, want.Status, settled.Status, line)
}

// checkDashboardScreenshotLine checks the line that refreshes the
// screenshot, md being the guide, without running the browser tests.
func checkDashboardScreenshotLine(t *testing.T, line, md string) {
	t.Helper()
	dir, command, _ := strings.Cut(strings.TrimPrefix(line, "cd "), " && ")
	require.NotRegexp(t, notShell, command)
	module := filepath.Join("../..", dir)
	require.FileExists(t, filepath.Join(module, "go.mod"), "%s: a module of its own", line)
	tests, err := filepath.Glob(filepath.Join(module, "*_test.go"))
	require.NoError(t, err)
	var src strings.Builder
	for _, f := range tests {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src.Write(b)
	}

	words := shellWords(t, command)
	for len(words) > 0 && strings.Contains(words[0], "=") {
		name, value, _ := strings.Cut(words[0], "=")
		words = words[1:]
		assert.True(t, strings.Contains(src.String(), `os.Getenv("`+name+`")`), "%s: the tests in %s read %s", line, dir, name)
		if filepath.Ext(value) == ".png" {
			// The image the guide shows, from the module's directory.
			shown, err := filepath.Rel("../../docs", filepath.Join(module, value))
			require.NoError(t, err)
			assert.True(t, strings.Contains(md, "]("+filepath.ToSlash(shown)+")"), "%s: %s is the image the guide shows", line, value)
		}
	}
	require.GreaterOrEqual(t, len(words), 2)
	require.Equal(t, []string{"go", "test"}, words[:2], line)
	if testing.Short() {
		return
	}
	// -list instead of -run: the tests it selects are listed, not run.
	args := []string{"test"}
	for _, w := range words[2:] {
		if w == "-run" || w == "--run" {
			w = "-list"
		}
		args = append(args, w)
	}
	require.Contains(t, args, "-list", "%s selects tests with -run", line)
	cmd := exec.Command("go", args...)
	cmd.Dir = module
	cmd.Env = childEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s (as go %s):\n%s", line, strings.Join(args, " "), out)
	assert.Regexp(t, `(?m)^Test\w+$`, string(out), "%s selects tests", line)
}
