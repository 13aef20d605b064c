//go:build unix

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/readmecheck"
)

// TestSandboxAndReceiverMeetWithStandardWebhooks: the sandbox with
// -webhook-scheme standard and the example receiver, started with the
// export lines the sandbox prints pasted into its shell, meet: every event
// is verified and processed at its first attempt.
func TestSandboxAndReceiverMeetWithStandardWebhooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the receiver")
	}
	for _, tool := range []string{"bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	receiverAddr := "127.0.0.1:" + freePorts(t, 1)[0]
	baseURL, apiKey, stdout, _ := startRunTimeouts(t, serverTimeouts(), "-quiet", "-webhook-scheme", "standard",
		"-webhook-url", "http://"+receiverAddr+"/webhooks", "-webhook-retry-wait", "1ms")
	exports := exportLines(stdout.String())
	require.Len(t, exports, 4, "%s", stdout)
	assert.Equal(t, "export PAYMENTS_WEBHOOK_SCHEME=standard", exports[3])

	bin := buildCommand(t, t.TempDir(), "github.com/paymentsapi/payments-go/examples/webhook-receiver")
	script := strings.Join(exports, "\n") + "\nPAYMENTS_WEBHOOK_ADDR=" + receiverAddr + " " + shellQuote(bin)
	rcOut, rcErr, exited := startScript(t, script, childEnv())
	waitFor(t, "the receiver", rcOut, rcErr, exited, `"msg":"listening"`)

	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL))
	require.NoError(t, err)
	_, err = client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme", Email: "ops@acme.example",
	})
	require.NoError(t, err)
	_, err = client.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted)
	require.NoError(t, err)
	status, data := adminCall(t, baseURL, apiKey, http.MethodPost, "/_sandbox/deliveries/wait", "")
	require.Equal(t, http.StatusOK, status, "%s", data)
	var log deliveryLog
	require.NoError(t, json.Unmarshal(data, &log))
	require.Len(t, log.Deliveries, 2)
	for _, d := range log.Deliveries {
		assert.Equal(t, "delivered", d.Status, d.Event)
		if assert.Len(t, d.Attempts, 1, "%s: verified at the first attempt", d.Event) {
			assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
		}
		assert.Contains(t, rcOut.String(), `"msg":"event processed","event_id":"`+d.EventID+`"`)
	}
	assert.NotContains(t, rcOut.String(), `"level":"WARN"`)
}

// TestREADMEStandardWebhooksCommands: the sandbox command of the README's
// "Standard Webhooks" section starts the sandbox with the standard scheme
// and makes it print PAYMENTS_WEBHOOK_SCHEME=standard, which the receiver
// command, run after pasting the export lines, needs no more than.
func TestREADMEStandardWebhooksCommands(t *testing.T) {
	b, err := os.ReadFile("../../docs/webhooks.md")
	require.NoError(t, err)
	sec, ok := readmecheck.Section(string(b), "## Standard Webhooks")
	require.True(t, ok, "docs/webhooks.md has no Standard Webhooks section")
	blocks := shellBlocks(sec)
	require.Len(t, blocks, 1, "one sh block")
	cmds := commandLines(blocks[0])
	require.Equal(t, []string{sandboxCommand + " -webhook-scheme standard", receiverCommand}, cmds)

	args := shellWords(t, strings.TrimPrefix(cmds[0], sandboxCommand))
	// Only the address and the URL change: no test sends events to
	// whatever listens on the README's ports.
	_, _, stdout, _ := startRunTimeouts(t, serverTimeouts(), append(args, "-addr", "127.0.0.1:0", "-webhook-url", "none", "-quiet")...)
	assert.Contains(t, exportLines(stdout.String()), "export PAYMENTS_WEBHOOK_SCHEME=standard")
}
