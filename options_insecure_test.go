package payments_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// TestInsecurePlainHTTPIsAnExplicitOptIn: plain http to a host that is not
// loopback (a sandbox between containers) needs WithInsecurePlainHTTP, or
// PAYMENTS_INSECURE_PLAIN_HTTP=1 with NewClientFromEnv.
func TestInsecurePlainHTTPIsAnExplicitOptIn(t *testing.T) {
	_, err := payments.NewClient("sk_test_x", payments.WithBaseURL("http://sandbox:8765"))
	require.ErrorIs(t, err, payments.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "WithInsecurePlainHTTP")

	c, err := payments.NewClient("sk_test_x", payments.WithBaseURL("http://sandbox:8765"), payments.WithInsecurePlainHTTP())
	require.NoError(t, err)
	assert.Equal(t, "payments.Client(http://sandbox:8765)", c.String())

	t.Setenv("PAYMENTS_API_KEY", "sk_test_x")
	t.Setenv("PAYMENTS_BASE_URL", "http://sandbox:8765")
	_, err = payments.NewClientFromEnv()
	require.ErrorIs(t, err, payments.ErrInvalidConfig)
	t.Setenv("PAYMENTS_INSECURE_PLAIN_HTTP", "1")
	_, err = payments.NewClientFromEnv()
	require.NoError(t, err)

	_, err = payments.NewClient("sk_test_x", payments.WithBaseURL("ftp://sandbox"), payments.WithInsecurePlainHTTP())
	require.ErrorIs(t, err, payments.ErrInvalidConfig, "only http and https")
}
