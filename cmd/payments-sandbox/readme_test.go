//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
