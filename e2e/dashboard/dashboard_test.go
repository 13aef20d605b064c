package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// receiver is a merchant's webhook endpoint: it answers status (503 until
// the test "fixes" it) and keeps the events it got.
type receiver struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	events []*payments.Event
}

func newReceiver(t *testing.T, status int) *receiver {
	rc := &receiver{}
	rc.status.Store(int32(status))
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if ev, err := payments.ParseEvent(body); err == nil {
			rc.mu.Lock()
			rc.events = append(rc.events, ev)
			rc.mu.Unlock()
		}
		w.WriteHeader(int(rc.status.Load()))
		fmt.Fprintf(w, `{"received": true, "status": %d}`, rc.status.Load())
	}))
	t.Cleanup(rc.Close)
	return rc
}

// count returns how many events of kind about the resource id the
// receiver got.
func (rc *receiver) count(kind payments.EventType, id string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, ev := range rc.events {
		var data struct {
			ID string `json:"id"`
		}
		if ev.Type == kind && json.Unmarshal(ev.Data, &data) == nil && data.ID == id {
			n++
		}
	}
	return n
}

const xssName = `<img src=x onerror=alert(1)>`

// TestDashboardInABrowser is the walk a merchant takes: create a recipient
// and a payment through the SDK and see them, see the failed delivery, fix
// the receiver and click Redeliver until the 200 shows, trigger an event
// from the page and see the receiver get it; a recipient named like an
// HTML tag shows as text, and no script ever opens a dialog.
func TestDashboardInABrowser(t *testing.T) {
	tab := browser(t)
	rc := newReceiver(t, http.StatusServiceUnavailable)
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{Dashboard: true}), paymentstest.WithWebhook(paymentstest.Webhook{URL: rc.URL, Secrets: []string{"whsec_e2e"}}),
		paymentstest.WithWebhook(paymentstest.Webhook{NoRetries: true}))
	t.Cleanup(srv.Close)
	c := srv.Client()
	ctx := context.Background()

	r, err := c.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Lovelace", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	_, err = c.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456780", AccountName: xssName, AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	p, err := c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("1500")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-e2e-1",
	})
	require.NoError(t, err)
	_, err = c.Payments.Confirm(ctx, &payments.PaymentConfirmParams{Reference: p.Reference, QuoteID: p.Quote.QuoteID})
	require.NoError(t, err)
	require.NoError(t, srv.WaitForDeliveries(ctx))

	var dialogs atomic.Int32
	chromedp.ListenTarget(tab, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
		}
	})

	// The recipient and the payment, with its timeline.
	var recipients, payment string
	require.NoError(t, chromedp.Run(tab,
		chromedp.Navigate(srv.URL()+"/_dashboard/"),
		chromedp.WaitVisible(`#recipients tr.recipient`),
		chromedp.Text(`#recipients`, &recipients),
		chromedp.Text(`#payments article.payment[data-id="`+p.ID+`"]`, &payment),
	))
	assert.Contains(t, recipients, "Ada Lovelace")
	assert.Contains(t, payment, "order-e2e-1")
	assert.Contains(t, payment, "completed")
	assert.Contains(t, payment, "payment.initiated")
	assert.Contains(t, payment, "payment.completed")

	// The XSS recipient is text: no img element, its name as typed.
	var xssText string
	var imgs int
	require.NoError(t, chromedp.Run(tab,
		chromedp.Text(`#recipients tr.recipient:nth-child(2) td.name`, &xssText),
		chromedp.Evaluate(`document.querySelectorAll("#recipients img").length`, &imgs),
	))
	assert.Equal(t, xssName, xssText)
	assert.Zero(t, imgs)

	// The payment.completed delivery failed with 503; fix the receiver and
	// redeliver from the page.
	completed := eventOf(t, srv, payments.EventPaymentCompleted)
	article := `article.event[data-id="` + completed + `"]`
	var before string
	require.NoError(t, chromedp.Run(tab, chromedp.Text(article, &before)))
	assert.Contains(t, before, "HTTP 503")
	assert.NotContains(t, before, "HTTP 200")
	rc.status.Store(http.StatusOK)
	require.NoError(t, chromedp.Run(tab, chromedp.Click(article+` button.redeliver`)))
	{
		var loc, html string
		short, cancel := context.WithTimeout(tab, 5*time.Second)
		err := chromedp.Run(short, chromedp.WaitVisible(`#notice`))
		cancel()
		_ = chromedp.Run(tab, chromedp.Location(&loc), chromedp.OuterHTML("body", &html))
		require.NoError(t, err, "at %s: %.3000s", loc, html)
	}
	// The redirect shows the page at once; the live update brings the
	// attempt's answer when it comes.
	waitText(t, tab, article, "HTTP 200")
	var after string
	require.NoError(t, chromedp.Run(tab, chromedp.Text(article, &after)))
	assert.Contains(t, after, "Redelivery")
	assert.Contains(t, after, `{"received": true, "status": 200}`, "the first part of the receiver's answer")

	// Trigger recipient.verified for Ada from the page.
	require.NoError(t, chromedp.Run(tab,
		chromedp.SetValue(`#trigger-kind`, string(payments.EventRecipientVerified)),
		chromedp.SendKeys(`#trigger-resource`, r.ID),
		chromedp.Click(`#trigger`),
		chromedp.WaitVisible(`#notice`),
	))
	require.Eventually(t, func() bool { return rc.count(payments.EventRecipientVerified, r.ID) == 2 },
		30*time.Second, 20*time.Millisecond, "the receiver gets the triggered event (the second recipient.verified of Ada)")

	// A bad input shows its problem on the page and changes nothing.
	events := len(srv.Events())
	var problem string
	require.NoError(t, chromedp.Run(tab,
		chromedp.SetValue(`#advance`, "-1h"),
		chromedp.Submit(`#advance`),
		chromedp.WaitVisible(`#problem`),
		chromedp.Text(`#problem`, &problem),
	))
	assert.Contains(t, problem, "only moves forward")
	assert.Len(t, srv.Events(), events)
	// The refusal redirected to the page's own address: its live updates go
	// on (a new payment shows up without a reload), and a reload works.
	var loc string
	require.NoError(t, chromedp.Run(tab, chromedp.Location(&loc)))
	assert.True(t, strings.HasPrefix(loc, srv.URL()+"/_dashboard/?problem="), "at %s", loc)
	quote, err := c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("20.00")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-e2e-quote",
	})
	require.NoError(t, err)
	waitText(t, tab, `#payments article.payment[data-id="`+quote.ID+`"]`, "quote, not confirmed")
	require.NoError(t, chromedp.Run(tab, chromedp.Reload(), chromedp.WaitVisible(`#problem`), chromedp.WaitVisible(`#payments`)))

	// The finder narrows the page to one payment, by reference; the event
	// shows the body that was sent.
	var found int
	require.NoError(t, chromedp.Run(tab,
		chromedp.SetValue(`#find-payment`, "order-e2e-1"),
		chromedp.Submit(`#find-payment`),
		chromedp.WaitVisible(`#payments article.payment[data-id="`+p.ID+`"]`),
		chromedp.Evaluate(`document.querySelectorAll("#payments article.payment").length`, &found),
	))
	assert.Equal(t, 1, found, "only order-e2e-1")
	var sent string
	require.NoError(t, chromedp.Run(tab,
		chromedp.Click(article+` details.sent summary`),
		chromedp.Text(article+` pre.event-body`, &sent),
	))
	assert.Contains(t, sent, `"event": "payment.completed"`)
	assert.Contains(t, sent, "order-e2e-1")

	if path := os.Getenv("PAYMENTS_DASHBOARD_SCREENSHOT"); path != "" {
		screenshot(t, tab, srv.URL()+"/_dashboard/", path)
	}
	assert.Zero(t, dialogs.Load(), "no script opened a dialog")
}

// TestDashboardOnANarrowWindow: at 400 px the page needs no sideways
// scrolling; wide tables scroll inside their own box.
func TestDashboardOnANarrowWindow(t *testing.T) {
	tab := browser(t)
	rc := newReceiver(t, http.StatusOK)
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{Dashboard: true}), paymentstest.WithWebhook(paymentstest.Webhook{URL: rc.URL, Secrets: []string{"whsec_e2e"}}))
	t.Cleanup(srv.Close)
	_, err := srv.Client().Recipients.Create(context.Background(), &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Lovelace", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	require.NoError(t, srv.WaitForDeliveries(context.Background()))
	var overflow int
	require.NoError(t, chromedp.Run(tab,
		chromedp.EmulateViewport(400, 800),
		chromedp.Navigate(srv.URL()+"/_dashboard/"),
		chromedp.WaitVisible(`#events article.event`),
		chromedp.Evaluate(`document.documentElement.scrollWidth - window.innerWidth`, &overflow),
	))
	assert.LessOrEqual(t, overflow, 0, "no horizontal scrolling at 400 px")
}

// eventOf returns the id of the server's event of kind.
func eventOf(t *testing.T, srv *paymentstest.Server, kind payments.EventType) string {
	t.Helper()
	for _, ev := range srv.Events() {
		if ev.Type == kind {
			return ev.ID
		}
	}
	t.Fatalf("no %s event", kind)
	return ""
}

// waitText waits until the element's text contains want: the page's live
// update brings it.
func waitText(t *testing.T, tab context.Context, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var text string
	for time.Now().Before(deadline) {
		if err := chromedp.Run(tab, chromedp.Text(sel, &text, chromedp.ByQuery)); err == nil && strings.Contains(text, want) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never showed %q; it shows:\n%s", sel, want, text)
}

// screenshot writes the dashboard at 1280 by 1600 px to path.
func screenshot(t *testing.T, tab context.Context, u, path string) {
	t.Helper()
	var png []byte
	require.NoError(t, chromedp.Run(tab,
		chromedp.EmulateViewport(1280, 1600),
		chromedp.Navigate(u),
		chromedp.WaitVisible(`#events article.event`),
		chromedp.CaptureScreenshot(&png),
	))
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("wrote %s (%d bytes)", path, len(png))
}
