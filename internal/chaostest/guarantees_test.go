package chaostest_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// TestTLSCertificateErrorIsNotRetried: a server whose certificate the
// client does not trust is contacted once, however many retries are
// allowed, and the error says why. Another attempt could not succeed, and
// the request never left the process in clear.
func TestTLSCertificateErrorIsNotRetried(t *testing.T) {
	var conns, requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake errors
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()

	// The SDK's default transport, which trusts the system's roots only.
	c, err := payments.NewClient(leakAPIKey, payments.WithBaseURL(srv.URL),
		payments.WithRetries(payments.RetryPolicy{MaxAttempts: 6}), payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 5 * time.Millisecond}))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err = c.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	var tErr *payments.TransportError
	require.ErrorAs(t, err, &tErr)
	assert.Equal(t, 1, tErr.Attempts)
	var (
		unknown  x509.UnknownAuthorityError
		verifErr *tls.CertificateVerificationError
	)
	assert.True(t, errors.As(err, &unknown) || errors.As(err, &verifErr), "the cause is the certificate: %v", err)
	assert.NotEmpty(t, tErr.IdempotencyKey)
	// Closing waits for the server's connections, so the count is final.
	srv.Close()
	assert.Equal(t, int32(1), conns.Load(), "one connection, no retry")
	assert.Zero(t, requests.Load(), "no request was sent")
}

type failingRandom struct{}

var errNoEntropy = errors.New("no entropy")

func (failingRandom) Read([]byte) (int, error) { return 0, errNoEntropy }

// TestIdempotencyKeyRandomSourceFailure: the SDK makes its keys with
// uuid.NewRandom, so a failing random source gives an error, not a panic
// (uuid.New would panic) nor a request without a key. A key given with
// WithIdempotencyKey needs no random source.
func TestIdempotencyKeyRandomSourceFailure(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	r, err := c.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	sent := len(srv.Requests())

	uuid.SetRand(failingRandom{})
	defer uuid.SetRand(nil)
	params := &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("10")}, Currency: "NGN", RecipientID: r.ID, Reference: "order-entropy",
	}
	var p *payments.Payment
	require.NotPanics(t, func() { p, err = c.Payments.Initiate(ctx, params) })
	assert.Nil(t, p)
	assert.ErrorIs(t, err, errNoEntropy)
	assert.Len(t, srv.Requests(), sent, "nothing was sent")

	p, err = c.Payments.Initiate(ctx, params, payments.WithIdempotencyKey("order-entropy-1"))
	require.NoError(t, err)
	assert.Equal(t, "order-entropy-1", p.LastResponse().IdempotencyKey)
}

// confirmStory creates a recipient and a quote on srv, and returns the
// confirm params.
func confirmStory(t *testing.T, ctx context.Context, c *payments.Client, ref string) *payments.PaymentConfirmParams {
	t.Helper()
	r, err := c.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	p, err := c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("2500.75")}, Currency: "NGN", RecipientID: r.ID, Reference: ref,
	})
	require.NoError(t, err)
	return p.ConfirmParams()
}

// TestConfirmLostAnswerAfterExpiryPaysOnce plays the recovery path the
// README documents: a Confirm pays but its answer is lost on every attempt;
// the quote then expires; the caller retries with the key the error named.
// The SDK must send it (the service replays the payment), never refuse it
// locally with advice to initiate again, which would pay twice.
func TestConfirmLostAnswerAfterExpiryPaysOnce(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	params := confirmStory(t, ctx, c, "order-lost-confirm")

	// net/http itself resends a keyed request on a dropped keep-alive
	// connection: drop more than the attempts, then clear the rest.
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Drop: true, AfterWork: true, Times: 1}))
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Drop: true, Times: 20}))
	_, err := c.Payments.Confirm(ctx, params)
	srv.ClearFaults()
	var terr *payments.TransportError
	require.ErrorAs(t, err, &terr, "every answer was lost")
	assert.Contains(t, err.Error(), "the outcome is unknown")
	assert.NotContains(t, err.Error(), "initiate")
	key, ok := payments.IdempotencyKeyOf(err)
	require.True(t, ok)

	srv.Advance(payments.QuoteLifetime + 10*time.Minute)
	paid, err := c.Payments.Confirm(ctx, params, payments.WithIdempotencyKey(key))
	require.NoError(t, err, "the retry with the key is sent and replayed")
	assert.Equal(t, payments.PaymentStatusCompleted, paid.Status)
	all := srv.PaymentsByReference("order-lost-confirm")
	require.Len(t, all, 1, "one payment")
	assert.Equal(t, all[0].ID, paid.ID, "the retry returns the payment the first attempt made")
}

// TestConfirmWithClientClockAhead: a client whose clock runs 6 minutes ahead
// of the service's confirms a fresh quote, at once and 4 minutes later: the
// SDK never judges a quote's life itself. (Long ago, it compared expires_at
// with its own clock and refused every Confirm.)
func TestConfirmWithClientClockAhead(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	srv.Advance(-6 * time.Minute)
	c := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	params := confirmStory(t, ctx, c, "order-skewed-clock")
	paid, err := c.Payments.Confirm(ctx, params)
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusCompleted, paid.Status)

	// A second quote, confirmed when 4 of its 5 minutes have passed on the
	// service's clock.
	params = confirmStory(t, ctx, c, "order-skewed-clock-2")
	srv.Advance(4 * time.Minute)
	paid, err = c.Payments.Confirm(ctx, params)
	require.NoError(t, err)
	assert.Equal(t, payments.PaymentStatusCompleted, paid.Status)
}
