package paymentsotel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentsotel"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// TestNoSecretsInTelemetry runs a faulted journey on the fake (a recipient
// with an account number and an identity document, a payment initiated and
// confirmed, a virtual account with a BVN, a payment into it, a refused
// call, a test event, and every webhook received by an instrumented
// handler) and looks for the key, the personal data and the amounts in every
// value that the spans and metric data points carry.
func TestNoSecretsInTelemetry(t *testing.T) {
	r := newRig(t)
	verifier, err := webhook.NewSignatureVerifier([]string{hookSecret})
	require.NoError(t, err)
	receiver := httptest.NewServer(webhook.NewHandler(verifier,
		func(context.Context, *payments.Event) error { return nil }, r.inst.HandlerOption()))
	defer receiver.Close()
	srv := paymentstest.NewServer(paymentstest.WithWebhook(paymentstest.Webhook{URL: receiver.URL, Secrets: []string{hookSecret}}),
		paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}}))
	defer srv.Close()
	client := r.fakeClient(srv)
	ctx := testContext(t)

	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 1}))
	rcp, err := client.Recipients.Create(ctx, recipientParams())
	require.NoError(t, err)
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusBadGateway, Times: 1}))
	_, err = client.Recipients.Update(ctx, rcp.ID, &payments.RecipientUpdateParams{AccountNumber: "5566778899"},
		payments.WithIdempotencyKey(uuid.NewString()))
	require.NoError(t, err)
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 1}))
	p, err := client.Payments.Initiate(ctx, initiateParams(rcp.ID, "order-privacy"))
	require.NoError(t, err)
	_, err = client.Payments.Initiate(ctx, initiateParams(rcp.ID, "order-privacy"))
	require.Error(t, err, "a reused reference is refused")
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusGatewayTimeout, Times: 1}))
	_, err = client.Payments.Confirm(ctx, p.ConfirmParams())
	require.NoError(t, err)
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusTooManyRequests, Times: 1}))
	va, err := client.VirtualAccounts.Create(ctx, &payments.VirtualAccountCreateParams{
		AccountType:  payments.AccountTypeIndividual,
		AccountName:  "Ada Okafor Collections",
		Email:        "ada.okafor@example.com",
		FirstName:    "Ada",
		LastName:     "Okafor",
		BVN:          "22345678901",
		MobileNumber: "+2348031234567",
		Metadata:     &payments.VirtualAccountMetadata{Country: "NG", UseCase: "collections"},
	}, payments.WithIdempotencyKey(uuid.NewString()))
	require.NoError(t, err)
	_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), decimal.RequireFromString("4243.18"), "NGN")
	require.NoError(t, err)
	_, err = client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted)
	require.NoError(t, err)
	require.NoError(t, srv.WaitForDeliveries(ctx))

	values := telemetryValues(t, r)
	forbidden := map[string]string{
		"API key":                srv.APIKey(),
		"bearer token":           "Bearer",
		"account number":         "0123456789",
		"updated account number": "5566778899",
		"virtual account number": string(va.AccountNumber),
		"identification number":  "NIN48213377",
		"BVN":                    "22345678901",
		"mobile number":          "2348031234567",
		"email":                  "ada.okafor@example.com",
		"name":                   "Okafor",
		"amount":                 "7319.46",
		"fee":                    p.Quote.Fee.StringFixed(2),
		"total":                  p.Quote.TotalAmount.StringFixed(2),
		"limit":                  "985000.75",
		"incoming amount":        "4243.18",
		"reference":              "order-privacy",
		"description":            "Invoice 1042",
		// Ids are not secrets, but none belongs in an attribute: url.full
		// carries the template instead.
		"recipient id":       rcp.ID,
		"payment id":         p.ID,
		"quote id":           p.Quote.QuoteID,
		"virtual account id": va.ID,
	}
	for what, secret := range forbidden {
		require.NotEmpty(t, secret, what)
		for _, v := range values {
			assert.NotContains(t, v, secret, "the %s leaked into telemetry", what)
		}
	}

	// The scan saw what it should: spans of every kind and their
	// high-cardinality values, and the metrics.
	joined := strings.Join(values, "\n")
	for _, want := range []string{
		"payments.initiate", "POST /payments/confirm", "PUT /payments/recipients/{id}", paymentsotel.SpanWebhook,
		"virtual_account.payment_received", p.LastResponse().Stan, p.LastResponse().IdempotencyKey,
		"error.type=504", "error.type=429", "error.type=422", "payments.retry.reason=502",
	} {
		assert.Contains(t, joined, want)
	}
	assert.GreaterOrEqual(t, len(r.named(paymentsotel.SpanWebhook)), len(srv.Events()))
}

// telemetryValues returns every string that the recorded spans and the
// collected metrics carry: span names, status descriptions, attribute values
// of spans, events and links, and every data point's attributes.
func telemetryValues(t *testing.T, r *rig) []string {
	t.Helper()
	var out []string
	add := func(kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			out = append(out, string(kv.Key)+"="+kv.Value.Emit())
		}
	}
	for _, s := range r.spans.Ended() {
		out = append(out, s.Name(), s.Status().Description)
		add(s.Attributes())
		for _, e := range s.Events() {
			out = append(out, e.Name)
			add(e.Attributes)
		}
		for _, l := range s.Links() {
			add(l.Attributes)
		}
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	points := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out = append(out, m.Name)
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					add(dp.Attributes.ToSlice())
					points++
				}
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					add(dp.Attributes.ToSlice())
					points++
				}
			default:
				t.Fatalf("metric %s is a %T the scan does not read", m.Name, m.Data)
			}
		}
	}
	require.Greater(t, points, 10, "the scan read the metrics")
	return out
}
