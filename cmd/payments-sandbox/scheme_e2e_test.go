//go:build unix

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
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
