package payments_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

func TestNewClientRefusesBadConfig(t *testing.T) {
	cases := []struct {
		name string
		key  string
		opts []payments.Option
		want string // part of the message
	}{
		{"empty key", "", []payments.Option{payments.WithBaseURL("https://api.example")}, "API key is empty"},
		{"blank key", "   ", []payments.Option{payments.WithBaseURL("https://api.example")}, "API key is empty"},
		{"key with space", "sk_test abc", []payments.Option{payments.WithBaseURL("https://api.example")}, "spaces or control characters"},
		{"key with newline", "sk_test\nabc", []payments.Option{payments.WithBaseURL("https://api.example")}, "spaces or control characters"},
		{"key with trailing newline", "sk_test_abc\n", []payments.Option{payments.WithBaseURL("https://api.example")}, "spaces or control characters"},
		{"key with tab", "sk\ttest", []payments.Option{payments.WithBaseURL("https://api.example")}, "spaces or control characters"},
		{"no base URL", harnessKey, nil, "no base URL"},
		{"empty base URL", harnessKey, []payments.Option{payments.WithBaseURL("")}, "no base URL"},
		{"unparsable base URL", harnessKey, []payments.Option{payments.WithBaseURL("https://api example.com:port/")}, "not an absolute URL"},
		{"relative base URL", harnessKey, []payments.Option{payments.WithBaseURL("/v1")}, "not an absolute URL"},
		{"host only", harnessKey, []payments.Option{payments.WithBaseURL("api.example.com")}, "not an absolute URL"},
		{"http non-loopback", harnessKey, []payments.Option{payments.WithBaseURL("http://api.example.com")}, "plain http"},
		{"http private address", harnessKey, []payments.Option{payments.WithBaseURL("http://10.0.0.5:8080")}, "plain http"},
		{"http loopback look-alike", harnessKey, []payments.Option{payments.WithBaseURL("http://localhost.evil.example")}, "plain http"},
		{"http localhost with a trailing dot", harnessKey, []payments.Option{payments.WithBaseURL("http://localhost.:8080")}, "plain http"},
		{"http non-ASCII localhost look-alike", harnessKey, []payments.Option{payments.WithBaseURL("http://localhoſt:8080")}, "plain http"},
		{"http unspecified address", harnessKey, []payments.Option{payments.WithBaseURL("http://0.0.0.0:8080")}, "plain http"},
		{"ftp", harnessKey, []payments.Option{payments.WithBaseURL("ftp://api.example.com")}, "scheme must be https"},
		{"credentials in URL", harnessKey, []payments.Option{payments.WithBaseURL("https://user:pw@api.example.com")}, "credentials"},
		{"query in URL", harnessKey, []payments.Option{payments.WithBaseURL("https://api.example.com/?x=1")}, "query"},
		{"nil http client", harnessKey, []payments.Option{payments.WithBaseURL("https://api.example.com"), payments.WithHTTPClient(nil)}, "WithHTTPClient(nil)"},
		{"negative retries", harnessKey, []payments.Option{payments.WithBaseURL("https://api.example.com"), payments.WithRetries(payments.RetryPolicy{MaxAttempts: -1})}, "MaxAttempts must not be negative"},
		{"negative min wait", harnessKey, []payments.Option{payments.WithBaseURL("https://api.example.com"), payments.WithRetries(payments.RetryPolicy{WaitMin: -time.Second, WaitMax: time.Second})}, "must not be negative"},
		{"max below min", harnessKey, []payments.Option{payments.WithBaseURL("https://api.example.com"), payments.WithRetries(payments.RetryPolicy{WaitMin: 2 * time.Second, WaitMax: time.Second})}, "needs WaitMin <= WaitMax"},
		{"user agent with newline", harnessKey, []payments.Option{payments.WithBaseURL("https://api.example.com"), payments.WithUserAgent("acme\r\nX-Evil: 1")}, "line break"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := payments.NewClient(tc.key, tc.opts...)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.ErrorIs(t, err, payments.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
			if tc.key != "" && strings.TrimSpace(tc.key) != "" {
				assert.NotContains(t, err.Error(), tc.key)
			}
			assert.NotContains(t, err.Error(), "pw@", "credentials of the base URL are not echoed")
		})
	}
}

// The options of one call are RequestOptions, which NewClient also takes
// (a client-wide retry setting is one): those that only make sense for one
// call are refused there, with ErrInvalidConfig, and no client is made.
func TestNewClientRefusesCallOnlyOptions(t *testing.T) {
	for name, opt := range map[string]payments.RequestOption{
		"WithIdempotencyKey": payments.WithIdempotencyKey("order-1"),
		"WithHeader":         payments.WithHeader("X-Trace", "1"),
		"WithBodyField":      payments.WithBodyField("channel", "api"),
	} {
		c, err := payments.NewClient("sk_test_key", payments.WithBaseURL("https://api.payments.test"), opt)
		require.ErrorIs(t, err, payments.ErrInvalidConfig, name)
		assert.Nil(t, c)
		assert.Contains(t, err.Error(), name+" applies to one call", name)
	}
	_, err := payments.NewClient("sk_test_key", payments.WithBaseURL("https://api.payments.test"),
		payments.WithRetries(payments.RetryPolicy{MaxAttempts: 2}), payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: time.Second}),
		payments.WithRetries(payments.RetryPolicy{AttemptTimeout: time.Second}), payments.WithMiddleware())
	assert.NoError(t, err, "the options of both places")
}

func TestWithHeaderCannotOverrideAuthorization(t *testing.T) {
	mt := httpmock.NewMockTransport()
	var auth []string
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		auth = append(auth, req.Header.Values("Authorization")...)
		return httpmock.NewStringResponse(200, `{"success":true,"data":{}}`), nil
	})
	c, err := payments.NewClient(harnessKey, payments.WithBaseURL("https://api.example.com"), payments.WithHTTPClient(&http.Client{Transport: mt}))
	require.NoError(t, err)

	for _, name := range []string{"Authorization", "authorization", "AUTHORIZATION"} {
		_, err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil, payments.WithHeader(name, "Bearer someone-else"))
		var verr *payments.ValidationError
		require.True(t, errors.As(err, &verr), "%s: %v", name, err)
		assert.True(t, errors.Is(err, payments.ErrInvalidParams))
	}
	assert.Zero(t, mt.GetTotalCallCount())

	// A harmless header goes through, and the SDK's own Authorization stays.
	_, err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil, payments.WithHeader("X-Request-Id", "req-1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"Bearer " + harnessKey}, auth)
}

func TestRequestOptionsAreChecked(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name  string
		opt   payments.RequestOption
		field string
	}{
		{"owned Authorization", payments.WithHeader("Authorization", "Bearer other"), "header Authorization"},
		{"owned lower-case", payments.WithHeader("authorization", "Bearer other"), "header Authorization"},
		{"owned Idempotency-Key", payments.WithHeader("Idempotency-Key", "k"), "header Idempotency-Key"},
		{"owned Content-Type", payments.WithHeader("Content-Type", "text/plain"), "header Content-Type"},
		{"owned User-Agent", payments.WithHeader("User-Agent", "x"), "header User-Agent"},
		{"owned Host", payments.WithHeader("Host", "evil.example"), "header Host"},
		{"header injection", payments.WithHeader("X-Trace", "a\r\nAuthorization: Bearer x"), "header X-Trace"},
		{"bad header name", payments.WithHeader("X Trace", "a"), "header X Trace"},
		{"key with space", payments.WithIdempotencyKey("order 1"), "Idempotency-Key"},
		{"key with newline", payments.WithIdempotencyKey("order\n1"), "Idempotency-Key"},
		{"key too long", payments.WithIdempotencyKey(strings.Repeat("k", 256)), "Idempotency-Key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.client.Recipients.Create(context.Background(), validRecipientParams(), tc.opt)
			var verr *payments.ValidationError
			require.ErrorAs(t, err, &verr)
			assert.True(t, verr.Has(tc.field), verr.Error())
		})
	}
	assert.Zero(t, h.calls())
}

// TestBadRequestOptionsAreRefusedOnEveryOperation checks that no operation
// sends a request whose per-call options are bad (an idempotency key that
// is not printable ASCII, a header value with a NUL, a bad header name).
func TestBadRequestOptionsAreRefusedOnEveryOperation(t *testing.T) {
	h := newHarness(t)
	ops := map[string]func(c *payments.Client, opts ...payments.RequestOption) error{
		"Recipients.Create": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Recipients.Create(context.Background(), validRecipientParams(), opts...)
			return err
		},
		"Recipients.Update": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{AccountName: "Ada"}, opts...)
			return err
		},
		"Payments.Initiate": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Payments.Initiate(context.Background(), validInitiateParams(), opts...)
			return err
		},
		"Payments.Confirm": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: quoteUUID}, opts...)
			return err
		},
		"VirtualAccounts.Create": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.VirtualAccounts.Create(context.Background(), validVirtualAccountParams(), opts...)
			return err
		},
		"Webhooks.Trigger": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted, opts...)
			return err
		},
		"Client.Do": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Do(context.Background(), http.MethodPost, "/reports", map[string]string{"a": "b"}, nil, opts...)
			return err
		},
	}
	options := []struct {
		name, field string
		opt         payments.RequestOption
	}{
		{"non-ASCII key", "Idempotency-Key", payments.WithIdempotencyKey("ключ-1")},
		{"key with tab", "Idempotency-Key", payments.WithIdempotencyKey("order\t1")},
		{"header value with NUL", "header X-Trace", payments.WithHeader("X-Trace", "a\x00b")},
		{"header name with colon", "header X-Trace:", payments.WithHeader("X-Trace:", "a")},
		// A merchant who lost the stored key of an unknown-outcome call must
		// not get a fresh one by passing "": that could act twice.
		{"empty key", "Idempotency-Key", payments.WithIdempotencyKey("")},
		{"blank key", "Idempotency-Key", payments.WithIdempotencyKey("   ")},
	}
	for name, op := range ops {
		for _, o := range options {
			t.Run(name+"/"+o.name, func(t *testing.T) {
				err := op(h.client, o.opt)
				var verr *payments.ValidationError
				require.ErrorAs(t, err, &verr)
				assert.True(t, verr.Has(o.field), verr.Error())
			})
		}
	}
	assert.Zero(t, h.calls())
}

// TestInsecurePlainHTTPIsAnExplicitOptIn: plain http to a host that is not
// loopback (a sandbox between containers) needs WithInsecurePlainHTTP, or
// PAYMENTS_INSECURE_PLAIN_HTTP=1 with NewClientFromEnv.
func TestInsecurePlainHTTPIsAnExplicitOptIn(t *testing.T) {
	_, err := payments.NewClient("sk_test_x", payments.WithBaseURL("http://sandbox:8765"))
	require.ErrorIs(t, err, payments.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "WithInsecurePlainHTTP")

	c, err := payments.NewClient("sk_test_x", payments.WithBaseURL("http://sandbox:8765"), payments.WithInsecurePlainHTTP())
	require.NoError(t, err)
	assert.Equal(t, "payments.Client(http://sandbox:8765)", fmt.Sprint(c))

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

// WithRetries given to one call overrides the client's fields it sets, for
// that call only.
func TestRetrySettingsPerCall(t *testing.T) {
	busy := jsonResponder(503, errorEnvelope("busy"))
	for _, tc := range []struct {
		name         string
		client, call []payments.Option
		want         int
	}{
		{"client 1, call 3", []payments.Option{payments.WithRetries(payments.RetryPolicy{MaxAttempts: 2})}, []payments.Option{payments.WithRetries(payments.RetryPolicy{MaxAttempts: 4})}, 4},
		{"client 3, call 0", []payments.Option{payments.WithRetries(payments.RetryPolicy{MaxAttempts: 4})}, []payments.Option{payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1})}, 1},
		{"client 3, no call option", []payments.Option{payments.WithRetries(payments.RetryPolicy{MaxAttempts: 4})}, nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.client...)
			h.on(http.MethodPost, "/payments/recipients", busy)
			var opts []payments.RequestOption
			for _, o := range tc.call {
				opts = append(opts, o.(payments.RequestOption))
			}
			_, err := h.client.Recipients.Create(context.Background(), validRecipientParams(), opts...)
			var apiErr *payments.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.want, apiErr.Attempts)
			assert.Equal(t, tc.want, h.calls())
		})
	}

	t.Run("the call's waits replace the client's", func(t *testing.T) {
		h := newHarness(t, payments.WithRetries(payments.RetryPolicy{WaitMin: time.Minute, WaitMax: time.Minute}))
		h.on(http.MethodPost, "/payments/recipients", busy)
		start := time.Now()
		_, err := h.client.Recipients.Create(context.Background(), validRecipientParams(),
			payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}))
		require.Error(t, err)
		assert.Less(t, time.Since(start), 10*time.Second, "the client's minute-long waits were not used")
		assert.Equal(t, 3, h.calls())

		h2 := newHarness(t) // 1 to 5 ms
		h2.on(http.MethodPost, "/payments/recipients", busy)
		start = time.Now()
		_, err = h2.client.Recipients.Create(context.Background(), validRecipientParams(), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 2}),
			payments.WithRetries(payments.RetryPolicy{WaitMin: 150 * time.Millisecond, WaitMax: 150 * time.Millisecond}))
		require.Error(t, err)
		assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond, "the call's own, longer wait")
		assert.Equal(t, 2, h2.calls())
	})

	t.Run("bad values are refused, nothing sent", func(t *testing.T) {
		h := newHarness(t)
		for _, o := range []payments.RequestOption{payments.WithRetries(payments.RetryPolicy{MaxAttempts: -1}), payments.WithRetries(payments.RetryPolicy{WaitMin: time.Second, WaitMax: time.Millisecond}), payments.WithRetries(payments.RetryPolicy{WaitMin: -1, WaitMax: time.Nanosecond})} {
			_, err := h.client.Recipients.Create(context.Background(), validRecipientParams(), o)
			var verr *payments.ValidationError
			require.ErrorAs(t, err, &verr)
		}
		assert.Zero(t, h.calls())
	})
}
