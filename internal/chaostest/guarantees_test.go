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
		payments.WithMaxRetries(5), payments.WithRetryWait(time.Millisecond, 5*time.Millisecond))
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
		Amount: decimal.RequireFromString("10"), Currency: "NGN", RecipientID: r.ID, Reference: "order-entropy",
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
