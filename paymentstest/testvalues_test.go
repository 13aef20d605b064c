package paymentstest_test

import (
	"context"
	"errors"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/readmecheck"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// merchant is a merchant's side of a test: a client of the fake, and a
// webhook.Handler that verifies each delivery and records the events it
// processed, in order.
type merchant struct {
	srv    *paymentstest.Server
	client *payments.Client
	mu     sync.Mutex
	events []*payments.Event
}

const merchantSecret = "whsec_0123456789abcdef0123456789abcdef"

// startMerchant starts a receiver and a fake that delivers to it.
func startMerchant(t *testing.T, opts ...paymentstest.Option) *merchant {
	t.Helper()
	m := &merchant{}
	v, err := webhook.NewSignatureVerifier([]string{merchantSecret})
	require.NoError(t, err)
	h := webhook.NewHandler(v, func(_ context.Context, ev *payments.Event) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.events = append(m.events, ev)
		return nil
	})
	rcv := httptest.NewServer(h)
	t.Cleanup(rcv.Close)
	opts = append([]paymentstest.Option{
		paymentstest.WithWebhook(paymentstest.Webhook{URL: rcv.URL, Secrets: []string{merchantSecret}}),
		paymentstest.WithWebhookRetryWait(time.Millisecond),
	}, opts...)
	m.srv, m.client = start(t, opts...)
	return m
}

// received waits for every delivery and returns the kinds of the events
// the handler processed, in order. Every delivery must have been accepted
// on its first attempt: signed as the handler expects.
func (m *merchant) received(t *testing.T) []payments.EventType {
	t.Helper()
	require.NoError(t, m.srv.WaitForDeliveries(ctx(t)))
	for _, d := range m.srv.Deliveries() {
		require.Equal(t, paymentstest.DeliveryDelivered, d.Status, "%s", d.Event)
		require.Len(t, d.Attempts, 1, "%s", d.Event)
		require.Equal(t, http.StatusOK, d.Attempts[0].StatusCode, "%s", d.Event)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	kinds := make([]payments.EventType, len(m.events))
	for i, ev := range m.events {
		kinds[i] = ev.Type
	}
	return kinds
}

// last returns the last event the handler processed.
func (m *merchant) last(t *testing.T) *payments.Event {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	require.NotEmpty(t, m.events)
	return m.events[len(m.events)-1]
}

func (m *merchant) recipient(t *testing.T, accountNumber string) *payments.Recipient {
	t.Helper()
	p := recipientParams()
	p.AccountNumber = payments.AccountNumber(accountNumber)
	r, err := m.client.Recipients.Create(ctx(t), p)
	require.NoError(t, err)
	return r
}

// requireCode checks that err is the service's refusal with status and
// code.
func requireCode(t *testing.T, err error, status int, code payments.ErrorCode) *payments.APIError {
	t.Helper()
	var apiErr *payments.APIError
	require.True(t, errors.As(err, &apiErr), "want an *APIError with code %s, got %v", code, err)
	assert.Equal(t, status, apiErr.StatusCode)
	assert.Equal(t, code, apiErr.Code)
	assert.ErrorIs(t, err, code)
	return apiErr
}

func TestAccountNumberFailsVerification(t *testing.T) {
	m := startMerchant(t)
	r := m.recipient(t, paymentstest.AccountNumberFailsVerification)
	assert.Equal(t, []payments.EventType{payments.EventRecipientCreated, payments.EventRecipientVerificationFailed},
		m.received(t))
	got, err := m.last(t).Recipient()
	require.NoError(t, err)
	assert.Equal(t, r.ID, got.ID, "the event names the recipient")

	_, err = m.client.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: dec("100")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-1",
	})
	apiErr := requireCode(t, err, http.StatusUnprocessableEntity, payments.CodeRecipientVerificationFailed)
	assert.Equal(t, "recipient_id", apiErr.Errors[0].Field)
	assert.Empty(t, m.srv.Payments(), "nothing was initiated")

	// Fixing the account number verifies the recipient again.
	_, err = m.client.Recipients.Update(ctx(t), r.ID, &payments.RecipientUpdateParams{AccountNumber: "0123456789"})
	require.NoError(t, err)
	assert.Equal(t, payments.EventRecipientVerified, m.received(t)[2])
	initiate(t, m.client, r.ID, "100", "order-1")
	// An update that keeps the account number verifies nothing.
	_, err = m.client.Recipients.Update(ctx(t), r.ID, &payments.RecipientUpdateParams{AccountName: "Ada King"})
	require.NoError(t, err)
	assert.Equal(t, []payments.EventType{
		payments.EventRecipientCreated, payments.EventRecipientVerificationFailed,
		payments.EventRecipientVerified, payments.EventPaymentInitiated,
	}, m.received(t))
}

func TestAccountNumberVerifiesLate(t *testing.T) {
	const delay = 500 * time.Millisecond
	m := startMerchant(t, paymentstest.WithProcessingDelay(delay))
	r := m.recipient(t, paymentstest.AccountNumberVerifiesLate)
	params := &payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: dec("100")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-1"}
	_, err := m.client.Payments.Initiate(ctx(t), params)
	requireCode(t, err, http.StatusUnprocessableEntity, payments.CodeRecipientNotVerified)

	// WaitForDeliveries waits for the late verification too.
	assert.Equal(t, []payments.EventType{payments.EventRecipientCreated, payments.EventRecipientVerified}, m.received(t))
	evs := m.srv.Events()
	assert.GreaterOrEqual(t, evs[1].CreatedAt.Sub(evs[0].CreatedAt), delay-time.Millisecond, "verified after the delay")
	_, err = m.client.Payments.Initiate(ctx(t), params)
	require.NoError(t, err, "a verified recipient can be paid")
}

func TestAccountNumberVerifiesLateDropsAnOldVerification(t *testing.T) {
	m := startMerchant(t, paymentstest.WithProcessingDelay(300*time.Millisecond))
	r := m.recipient(t, paymentstest.AccountNumberVerifiesLate)
	_, err := m.client.Recipients.Update(ctx(t), r.ID, &payments.RecipientUpdateParams{
		AccountNumber: paymentstest.AccountNumberFailsVerification,
	})
	require.NoError(t, err)
	assert.Equal(t, []payments.EventType{payments.EventRecipientCreated, payments.EventRecipientVerificationFailed},
		m.received(t), "the verification of the old account number never lands")
	_, err = m.client.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: dec("100")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-1",
	})
	requireCode(t, err, http.StatusUnprocessableEntity, payments.CodeRecipientVerificationFailed)
}

// confirmTestAmount initiates and confirms a payment of amount to a
// verified recipient.
func confirmTestAmount(t *testing.T, m *merchant, amount string) (*payments.Payment, *payments.Payment) {
	t.Helper()
	r := m.recipient(t, "0123456789")
	p := initiate(t, m.client, r.ID, amount, "order-"+amount)
	done, err := m.client.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	return p, done
}

var initiated = []payments.EventType{
	payments.EventRecipientCreated, payments.EventRecipientVerified, payments.EventPaymentInitiated,
}

func TestAmountFails(t *testing.T) {
	m := startMerchant(t)
	_, done := confirmTestAmount(t, m, paymentstest.AmountFails)
	assert.Equal(t, payments.PaymentStatusFailed, done.Status)
	assert.False(t, done.IsCompleted)
	assert.Equal(t, append(initiated, payments.EventPaymentFailed), m.received(t))
	p, err := m.last(t).Payment()
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusFailed, p.Status)
	assert.True(t, m.srv.Balance("NGN").Equal(dec(paymentstest.DefaultBalance)), "nothing was drawn")

	_, err = m.client.Payments.Confirm(ctx(t), done.ConfirmParams())
	requireCode(t, err, http.StatusUnprocessableEntity, payments.CodeQuoteAlreadyConfirmed)

	// The same amount written otherwise is the same test value.
	m2 := startMerchant(t)
	_, done = confirmTestAmount(t, m2, "4000.020")
	assert.Equal(t, payments.PaymentStatusFailed, done.Status)
}

func TestAmountRejected(t *testing.T) {
	m := startMerchant(t)
	_, done := confirmTestAmount(t, m, paymentstest.AmountRejected)
	assert.Equal(t, payments.PaymentStatusRejected, done.Status)
	assert.Equal(t, "Payment rejected (test amount paymentstest.AmountRejected)", done.LastResponse().Message)
	assert.Equal(t, append(initiated, payments.EventPaymentRejected), m.received(t))
	assert.True(t, m.srv.Balance("NGN").Equal(dec(paymentstest.DefaultBalance)), "nothing was drawn")
}

func TestAmountCompletesLate(t *testing.T) {
	m := startMerchant(t, paymentstest.WithProcessingDelay(300*time.Millisecond))
	p, done := confirmTestAmount(t, m, paymentstest.AmountCompletesLate)
	assert.Equal(t, payments.PaymentStatusPending, done.Status, "pending first")
	assert.False(t, done.IsCompleted)
	drawn := dec(paymentstest.DefaultBalance).Sub(p.Quote.TotalAmount)
	assert.True(t, m.srv.Balance("NGN").Equal(drawn), "the total is drawn at confirm: %s", m.srv.Balance("NGN"))

	// The quote is used up, and the reference stays taken after it expires.
	_, err := m.client.Payments.Confirm(ctx(t), p.ConfirmParams())
	requireCode(t, err, http.StatusUnprocessableEntity, payments.CodeQuoteAlreadyConfirmed)
	m.srv.Advance(payments.QuoteLifetime + time.Second)
	_, err = m.client.Payments.Initiate(ctx(t), &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: dec("1")}, Currency: "NGN", RecipientID: m.srv.Recipients()[0].ID, Reference: p.Reference,
	})
	requireCode(t, err, http.StatusUnprocessableEntity, payments.CodeDuplicateReference)

	assert.Equal(t, append(initiated, payments.EventPaymentCompleted), m.received(t))
	ev, err := m.last(t).Payment()
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusCompleted, ev.Status)
	assert.True(t, ev.IsCompleted)
	stored, ok := m.srv.Payment(p.ID)
	require.True(t, ok)
	assert.Equal(t, payments.PaymentStatusCompleted, stored.Status)
	assert.True(t, m.srv.Balance("NGN").Equal(drawn), "drawn once")
}

func TestCloseDropsLateWork(t *testing.T) {
	srv := paymentstest.NewServer(paymentstest.WithProcessingDelay(time.Hour))
	c := srv.Client()
	p := recipientParams()
	p.AccountNumber = paymentstest.AccountNumberVerifiesLate
	_, err := c.Recipients.Create(ctx(t), p)
	require.NoError(t, err)
	start := time.Now()
	srv.Close()
	assert.Less(t, time.Since(start), 5*time.Second, "Close does not wait for the delay")
	assert.Len(t, srv.Events(), 1, "only recipient.created")
}

func TestRecipientAccountNumberRule(t *testing.T) {
	srv, c := start(t)
	for _, bad := range []string{"1", "abc", "1234567", "123456789012345678", "01234 56789", "4000-000-002"} {
		p := recipientParams()
		p.AccountNumber = payments.AccountNumber(bad)
		_, err := c.Recipients.Create(ctx(t), p)
		apiErr := requireCode(t, err, http.StatusUnprocessableEntity, payments.CodeValidationFailed)
		require.Len(t, apiErr.Errors, 1, bad)
		assert.Equal(t, "account_number", apiErr.Errors[0].Field, bad)
		assert.Contains(t, apiErr.Errors[0].Message, "8 to 17 digits", bad)
	}
	assert.Empty(t, srv.Recipients())
	for _, good := range []string{"12345678", "0123456789", "12345678901234567"} {
		p := recipientParams()
		p.AccountNumber = payments.AccountNumber(good)
		_, err := c.Recipients.Create(ctx(t), p)
		require.NoError(t, err, good)
	}
	r := srv.Recipients()[0]
	_, err := c.Recipients.Update(ctx(t), r.ID, &payments.RecipientUpdateParams{AccountNumber: "abc"})
	requireCode(t, err, http.StatusUnprocessableEntity, payments.CodeValidationFailed)
	// payment_details.account_number keeps its wider rule: an IBAN.
	_, err = c.Recipients.Update(ctx(t), r.ID, &payments.RecipientUpdateParams{
		PaymentDetails: &payments.PaymentDetails{AccountNumber: "GB33BUKB20201555555555"},
	})
	require.NoError(t, err)
}

func TestProcessingDelayOption(t *testing.T) {
	_, err := paymentstest.StartServer(paymentstest.WithSandbox(paymentstest.Sandbox{ProcessingDelay: -time.Second}))
	require.EqualError(t, err, "paymentstest: WithSandbox: ProcessingDelay(-1s) is negative")
}

// testValues are the constants the README's and the package's tables
// document, with their values.
var testValues = map[string]string{
	"AccountNumberFailsVerification": paymentstest.AccountNumberFailsVerification,
	"AccountNumberVerifiesLate":      paymentstest.AccountNumberVerifiesLate,
	"AmountFails":                    paymentstest.AmountFails,
	"AmountRejected":                 paymentstest.AmountRejected,
	"AmountCompletesLate":            paymentstest.AmountCompletesLate,
}

var backticked = regexp.MustCompile("`([^`]+)`")

// TestTestValuesREADMETable: the README's table names every test value once,
// each with the constant's value.
func TestTestValuesREADMETable(t *testing.T) {
	b, err := os.ReadFile("../docs/testing.md")
	require.NoError(t, err)
	sec, ok := readmecheck.Section(string(b), "## Testing without the service: `paymentstest` and `payments-sandbox`")
	require.True(t, ok, "docs/testing.md has the sandbox section")
	head := strings.Index(sec, "\n| Test value | Constant (`paymentstest.`) | What happens |\n|---|---|---|\n")
	require.NotEqual(t, -1, head, "the section has the test-value table")
	seen := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(sec[head+1:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		rows++
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 3, line)
		constCell := strings.TrimSpace(cells[1])
		if constCell == "—" { // a row of a default or a method, not a constant
			continue
		}
		m := backticked.FindStringSubmatch(constCell)
		require.NotNil(t, m, "no constant in %s", line)
		name := m[1]
		want, ok := testValues[name]
		require.True(t, ok, "the table names %s, which is not a test value", name)
		assert.False(t, seen[name], "%s twice", name)
		seen[name] = true
		v := backticked.FindStringSubmatch(cells[0])
		require.NotNil(t, v, "no value in %s", line)
		assert.Equal(t, want, v[1], "the README's value of %s", name)
	}
	for name := range testValues {
		assert.True(t, seen[name], "the README's table leaves out %s", name)
	}
	assert.Equal(t, len(testValues)+3, rows, "one row per constant, the two balance defaults and the incoming payment")
}

// TestTestValuesPackageTable: the package documentation's table names every
// test value with its value.
func TestTestValuesPackageTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	doc := f.Doc.Text()
	start := strings.Index(doc, "# Test values")
	require.NotEqual(t, -1, start)
	rows := map[string]string{} // constant: value
	for _, line := range strings.Split(doc[start:], "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 3 {
			if _, ok := testValues[fields[2]]; ok {
				rows[fields[2]] = fields[1]
			}
		}
	}
	for name, want := range testValues {
		assert.Equal(t, want, rows[name], "the package documentation's value of %s", name)
	}
}
