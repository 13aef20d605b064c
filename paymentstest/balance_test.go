package paymentstest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// pay initiates and confirms a payment, returning the confirm's error.
func (m *merchant) pay(t *testing.T, recipientID, amount, reference string) (*payments.Payment, error) {
	t.Helper()
	p := initiate(t, m.client, recipientID, amount, reference)
	_, err := m.client.Payments.Confirm(ctx(t), p.ConfirmParams())
	return p, err
}

type balanceLow struct {
	MerchantID string `json:"merchant_id"`
	Currency   string `json:"currency"`
	Balance    string `json:"balance"`
	Threshold  string `json:"threshold"`
}

func TestBalance(t *testing.T) {
	m := startMerchant(t,
		paymentstest.WithBalance(dec("20000")),
		paymentstest.WithBalanceLowThreshold(dec("5000")))
	va, err := m.client.VirtualAccounts.Create(ctx(t), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme", Email: "ops@acme.example",
	})
	require.NoError(t, err)
	r := m.recipient(t, "0123456789")
	balance := func(want string) {
		t.Helper()
		assert.Equal(t, dec(want).String(), m.srv.Balance("NGN").String())
	}

	_, err = m.pay(t, r.ID, "12000", "order-1") // total 12180.00
	require.NoError(t, err)
	balance("7820")
	_, err = m.pay(t, r.ID, "3000", "order-2") // total 3045.00: below the threshold
	require.NoError(t, err)
	balance("4775")
	kinds := m.received(t)
	require.Equal(t, payments.EventAccountBalanceLow, kinds[len(kinds)-1], "after the payment that crossed: %v", kinds)
	assert.Equal(t, payments.EventPaymentCompleted, kinds[len(kinds)-2])
	var low balanceLow
	require.NoError(t, m.last(t).DecodeData(&low))
	assert.Equal(t, balanceLow{MerchantID: m.srv.MerchantID(), Currency: "NGN", Balance: "4775.00", Threshold: "5000.00"}, low)

	_, err = m.pay(t, r.ID, "1000", "order-3") // total 1015.00: still below, no second alert
	require.NoError(t, err)
	balance("3760")

	// Short: refused, nothing drawn, the payment still confirmable.
	p, err := m.pay(t, r.ID, "5000", "order-4") // total 5075.00
	apiErr := requireCode(t, err, http.StatusUnprocessableEntity, payments.CodeInsufficientBalance)
	assert.Equal(t, "the NGN balance (3760.00) is less than the quote's total_amount (5075.00): fund the account, "+
		"for example by a payment into a virtual account, and confirm again with a new idempotency key before the quote expires (the same key replays this refusal)", apiErr.Message)
	balance("3760")
	stored, _ := m.srv.Payment(p.ID)
	assert.Equal(t, payments.PaymentStatusPending, stored.Status)

	// A customer's payment into a virtual account funds it; the same quote
	// then goes through, and the alert is armed again.
	_, err = m.srv.SimulateIncomingPayment(string(va.AccountNumber), dec("10000"), "")
	require.NoError(t, err)
	balance("13760")
	done, err := m.client.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusCompleted, done.Status)
	balance("8685")
	_, err = m.pay(t, r.ID, "4000", "order-5") // total 4060.00: below again
	require.NoError(t, err)
	balance("4625")

	assert.True(t, m.srv.Balance("USD").Equal(dec("20000")), "each currency has its own balance")
	assert.Equal(t, []payments.EventType{
		payments.EventVirtualAccountCreated, payments.EventRecipientCreated, payments.EventRecipientVerified,
		payments.EventPaymentInitiated, payments.EventPaymentCompleted,
		payments.EventPaymentInitiated, payments.EventPaymentCompleted, payments.EventAccountBalanceLow,
		payments.EventPaymentInitiated, payments.EventPaymentCompleted,
		payments.EventPaymentInitiated, // order-4, refused at first
		payments.EventVirtualAccountPaymentReceived,
		payments.EventPaymentCompleted, // order-4
		payments.EventPaymentInitiated, payments.EventPaymentCompleted, payments.EventAccountBalanceLow,
	}, m.received(t))
	require.NoError(t, m.last(t).DecodeData(&low))
	assert.Equal(t, "4625.00", low.Balance)
}

func TestBalanceLowThresholdZeroNeverAlerts(t *testing.T) {
	m := startMerchant(t, paymentstest.WithBalance(dec("1015")), paymentstest.WithBalanceLowThreshold(dec("0")))
	r := m.recipient(t, "0123456789")
	_, err := m.pay(t, r.ID, "1000", "order-1") // total 1015.00: all of it
	require.NoError(t, err)
	assert.True(t, m.srv.Balance("NGN").IsZero())
	assert.NotContains(t, m.received(t), payments.EventAccountBalanceLow)
	_, err = m.pay(t, r.ID, "1", "order-2")
	requireCode(t, err, http.StatusUnprocessableEntity, payments.CodeInsufficientBalance)
}

func TestBalanceStartingBelowTheThresholdAlertsOnce(t *testing.T) {
	m := startMerchant(t, paymentstest.WithBalance(dec("3000")))
	r := m.recipient(t, "0123456789")
	for _, ref := range []string{"order-1", "order-2"} {
		_, err := m.pay(t, r.ID, "100", ref)
		require.NoError(t, err)
	}
	var alerts int
	for _, k := range m.received(t) {
		if k == payments.EventAccountBalanceLow {
			alerts++
		}
	}
	assert.Equal(t, 1, alerts)
}

func TestBalanceOptions(t *testing.T) {
	_, err := paymentstest.StartServer(paymentstest.WithBalance(dec("-1")))
	require.EqualError(t, err, "paymentstest: WithBalance(-1) is negative")
	_, err = paymentstest.StartServer(paymentstest.WithBalanceLowThreshold(dec("-0.01")))
	require.EqualError(t, err, "paymentstest: WithSandbox: BalanceLowThreshold(-0.01) is negative")
}
