package paymentstest_test

import (
	"errors"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

func vaParams() *payments.VirtualAccountCreateParams {
	return &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual,
		AccountName: "Grace Hopper",
		Email:       "grace@example.com",
		FirstName:   "Grace",
		LastName:    "Hopper",
		BVN:         "12345678901",
		Metadata:    &payments.VirtualAccountMetadata{Country: "NG", Reference: "customer-7"},
	}
}

var tenDigits = regexp.MustCompile(`^[0-9]{10}$`)

func TestCreateVirtualAccount(t *testing.T) {
	fixed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	srv, c := start(t, paymentstest.WithClock(func() time.Time { return fixed }))
	va, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, va.LastResponse().StatusCode)
	assert.Regexp(t, tenDigits, string(va.AccountNumber))
	assert.Equal(t, "Grace Hopper", va.AccountName)
	assert.Equal(t, paymentstest.BankName, va.BankName)
	assert.Equal(t, "NGN", va.Currency)
	assert.True(t, va.IsActive)
	assert.Equal(t, fixed, va.CreatedAt)

	got, ok := srv.VirtualAccount(va.ID)
	require.True(t, ok)
	assert.Equal(t, va.AccountNumber, got.AccountNumber)

	biz, err := c.VirtualAccounts.Create(ctx(t), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme Ltd", Email: "ops@acme.test",
		Metadata: &payments.VirtualAccountMetadata{Country: "KE", BusinessRegNumber: "RC-1"},
	})
	require.NoError(t, err, "a business needs no names and a Kenyan account no BVN")
	assert.Equal(t, "KES", biz.Currency)
	assert.Len(t, srv.VirtualAccounts(), 2)
}

func TestVirtualAccountValidation(t *testing.T) {
	srv, _ := start(t)
	res := send(t, srv, http.MethodPost, "/accounts/virtual-accounts", `{}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.ElementsMatch(t, []string{"account_type", "account_name", "email"}, res.fields())

	res = send(t, srv, http.MethodPost, "/accounts/virtual-accounts", `{"account_type":"individual",
		"account_name":"G","email":"not an email","metadata":{"country":"NG"}}`, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.ElementsMatch(t, []string{"email", "first_name", "last_name", "bvn"}, res.fields())

	res = send(t, srv, http.MethodPost, "/accounts/virtual-accounts", `{"account_type":"business",
		"account_name":"G","email":"g@example.com","bvn":"123"}`, nil)
	assert.Equal(t, []string{"bvn"}, res.fields(), "a BVN that is given must have 11 digits")
	assert.Empty(t, srv.VirtualAccounts())
}

func TestVirtualAccountNumbersAreUnique(t *testing.T) {
	srv, c := start(t)
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	seen := map[string]bool{}
	for _, va := range srv.VirtualAccounts() {
		assert.Regexp(t, tenDigits, string(va.AccountNumber))
		assert.False(t, seen[string(va.AccountNumber)], "duplicate %s", va.AccountNumber)
		seen[string(va.AccountNumber)] = true
	}
	assert.Len(t, seen, n)
}

func TestSimulateIncomingPayment(t *testing.T) {
	srv, c := start(t)
	va, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)

	in, err := srv.SimulateIncomingPayment(string(va.AccountNumber), dec("2500.5"), "")
	require.NoError(t, err)
	assert.Equal(t, va.ID, in.VirtualAccountID)
	assert.Equal(t, "NGN", in.Currency)
	assert.True(t, in.Amount.Equal(dec("2500.50")))
	assert.NotEmpty(t, in.Reference)
	assert.Equal(t, "Sandbox Payer", in.PayerName)
	assert.Equal(t, []paymentstest.IncomingPayment{in}, srv.IncomingPayments())

	events := srv.Events()
	last := events[len(events)-1]
	assert.Equal(t, payments.EventVirtualAccountPaymentReceived, last.Type)
	ev, err := payments.ParseEvent(last.Body)
	require.NoError(t, err)
	got, err := ev.VirtualAccountPayment()
	require.NoError(t, err)
	assert.True(t, got.Amount.Equal(dec("2500.50")))
	assert.Equal(t, in.ID, got.ID)
	assert.Equal(t, va.ID, got.VirtualAccountID)
	assert.Equal(t, va.AccountNumber, got.AccountNumber)
	assert.Equal(t, in.Reference, got.Reference)
	assert.Equal(t, "Sandbox Payer", got.Payer.Name)
	assert.Equal(t, in.CreatedAt, got.ReceivedAt)
	assert.Contains(t, string(last.Data), `"amount":"2500.50"`)

	for name, call := range map[string]func() error{
		"unknown account": func() error { _, err := srv.SimulateIncomingPayment("0000000000", dec("1"), ""); return err },
		"zero amount": func() error {
			_, err := srv.SimulateIncomingPayment(string(va.AccountNumber), dec("0"), "")
			return err
		},
		"huge amount": func() error {
			_, err := srv.SimulateIncomingPayment(string(va.AccountNumber), dec("1e40"), "")
			return err
		},
		"wrong currency": func() error {
			_, err := srv.SimulateIncomingPayment(string(va.AccountNumber), dec("1"), "USD")
			return err
		},
	} {
		assert.Error(t, call(), name)
	}
	assert.Len(t, srv.IncomingPayments(), 1)

	srv.Close()
	_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), dec("1"), "")
	assert.True(t, errors.Is(err, paymentstest.ErrClosed))
}
