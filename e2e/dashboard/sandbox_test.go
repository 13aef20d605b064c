package dashboard

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// sandboxProcess is cmd/payments-sandbox built and started by the test,
// with what it printed: its URL, API key and dashboard address.
type sandboxProcess struct {
	url, apiKey, dashboard string
}

var (
	sandboxURLLine = regexp.MustCompile(`^export PAYMENTS_BASE_URL=(\S+)$`)
	sandboxKeyLine = regexp.MustCompile(`^export PAYMENTS_API_KEY=(\S+)$`)
	sandboxDashURL = regexp.MustCompile(`^Dashboard: (\S+) `)
)

// startSandbox builds cmd/payments-sandbox and runs it until the test
// ends (SIGINT, then SIGKILL).
func startSandbox(t *testing.T, args ...string) *sandboxProcess {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "payments-sandbox")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/paymentsapi/payments-go/cmd/payments-sandbox").CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-quiet"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	sp := &sandboxProcess{}
	deadline := time.After(time.Minute)
	for sp.url == "" || sp.apiKey == "" || sp.dashboard == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("payments-sandbox exited before printing its addresses")
			}
			if m := sandboxURLLine.FindStringSubmatch(line); m != nil {
				sp.url = m[1]
			}
			if m := sandboxKeyLine.FindStringSubmatch(line); m != nil {
				sp.apiKey = m[1]
			}
			if m := sandboxDashURL.FindStringSubmatch(line); m != nil {
				sp.dashboard = m[1]
			}
		case <-deadline:
			t.Fatal("payments-sandbox did not print its addresses")
		}
	}
	go func() {
		for range lines { // keep the pipe flowing
		}
		_ = cmd.Wait()
		close(exited)
	}()
	return sp
}

// TestSandboxDashboardInABrowser: the standalone sandbox prints its
// dashboard's address, the page shows what the SDK made, and Redeliver
// sends the event to the receiver again.
func TestSandboxDashboardInABrowser(t *testing.T) {
	tab := browser(t)
	rc := newReceiver(t, http.StatusOK)
	sp := startSandbox(t, "-webhook-url", rc.URL, "-webhook-retries", "none")
	assert.True(t, strings.HasPrefix(sp.dashboard, sp.url+"/"))
	c, err := payments.NewClient(sp.apiKey, payments.WithBaseURL(sp.url))
	require.NoError(t, err)
	defer c.Close()
	r, err := c.Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Grace Hopper", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rc.count(payments.EventRecipientCreated, r.ID) == 1 }, 30*time.Second, 10*time.Millisecond)

	var names string
	require.NoError(t, chromedp.Run(tab,
		chromedp.Navigate(sp.dashboard),
		chromedp.WaitVisible(`#recipients tr.recipient`),
		chromedp.Text(`#recipients`, &names),
	))
	assert.Contains(t, names, "Grace Hopper")
	require.NoError(t, chromedp.Run(tab,
		chromedp.Click(`article.event[data-kind="recipient.created"] button.redeliver`),
		chromedp.WaitVisible(`#notice`),
	))
	require.Eventually(t, func() bool { return rc.count(payments.EventRecipientCreated, r.ID) == 2 }, 30*time.Second, 10*time.Millisecond,
		"the receiver gets the redelivery")
	waitText(t, tab, `article.event[data-kind="recipient.created"]`, "Redelivery")
}
