package payments_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
)

// logSink collects JSON log lines.
type logSink struct{ testlog.Buffer }

func (s *logSink) text() string { return s.String() }

func (s *logSink) lines(t *testing.T) []map[string]any {
	t.Helper()
	out, err := s.JSONLines()
	require.NoError(t, err)
	return out
}

func loggedHarness(t *testing.T, level slog.Level, opts ...payments.Option) (*harness, *logSink) {
	sink := &logSink{}
	logger := slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: level}))
	return newHarness(t, append([]payments.Option{payments.WithLogger(logger)}, opts...)...), sink
}

func TestLoggingOneDebugLinePerRequest(t *testing.T) {
	h, sink := loggedHarness(t, slog.LevelDebug)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	h.on(http.MethodPut, "/payments/recipients/"+recipientUUID, jsonResponder(200, okEnvelope(recipientJSON)))

	r, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	_, err = h.client.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{AccountName: "Ada"})
	require.NoError(t, err)

	lines := sink.lines(t)
	require.Len(t, lines, 2, sink.text())
	first := lines[0]
	assert.Equal(t, "DEBUG", first["level"])
	assert.Equal(t, "POST", first["method"])
	assert.Equal(t, "/payments/recipients", first["path"])
	assert.EqualValues(t, 201, first["status"])
	assert.EqualValues(t, 1, first["attempts"])
	assert.Equal(t, stanUUID, first["stan"])
	assert.Equal(t, r.LastResponse().IdempotencyKey, first["idempotency_key"])
	assert.Equal(t, "recipients.create", first["operation"])
	// The duration is a string a person reads ("130.884µs"), not slog's
	// nanoseconds in JSON.
	dur, ok := first["duration"].(string)
	require.True(t, ok, "duration is %T", first["duration"])
	d, err := time.ParseDuration(dur)
	require.NoError(t, err)
	assert.Positive(t, d)
	assert.Equal(t, "PUT", lines[1]["method"])
	assert.Equal(t, "recipients.update", lines[1]["operation"])
	assert.Equal(t, "/payments/recipients/"+recipientUUID, lines[1]["path"])

	assertNoSecrets(t, sink.text())
}

func assertNoSecrets(t *testing.T, logs string) {
	t.Helper()
	assert.NotContains(t, logs, harnessKey)
	assert.NotContains(t, strings.ToLower(logs), "authorization")
	assert.NotContains(t, strings.ToLower(logs), "bearer")
}

func TestLoggingRetriesAtInfo(t *testing.T) {
	h, sink := loggedHarness(t, slog.LevelDebug)
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(503, errorEnvelope("busy")).
		Then(httpmock.NewErrorResponder(errConnReset)).
		Then(jsonResponder(200, okEnvelope(paymentJSON))))
	_, err := h.client.Payments.Initiate(context.Background(), validInitiateParams())
	require.NoError(t, err)

	lines := sink.lines(t)
	require.Len(t, lines, 3, sink.text())
	for i, attempt := range []int{2, 3} {
		assert.Equal(t, "INFO", lines[i]["level"])
		assert.Equal(t, "payments: retrying request", lines[i]["msg"])
		assert.Equal(t, "POST", lines[i]["method"])
		assert.Equal(t, "/payments/initiate", lines[i]["path"])
		assert.EqualValues(t, attempt, lines[i]["attempt"])
	}
	assert.Equal(t, "DEBUG", lines[2]["level"])
	assert.EqualValues(t, 3, lines[2]["attempts"])
	assert.EqualValues(t, 200, lines[2]["status"])
	assertNoSecrets(t, sink.text())
}

func TestLoggingAtInfoShowsNoSuccessLines(t *testing.T) {
	h, sink := loggedHarness(t, slog.LevelInfo)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	_, err := h.client.Recipients.Create(context.Background(), validRecipientParams())
	require.NoError(t, err)
	assert.Empty(t, sink.text())
}

func TestLoggingFailuresNeverLeakSecretsOrPersonalData(t *testing.T) {
	h, sink := loggedHarness(t, slog.LevelDebug, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 2}))
	h.on(http.MethodPost, "/accounts/virtual-accounts", jsonResponder(400,
		`{"success":false,"message":"token `+harnessKey+` may not open accounts for BVN 12345678901","stan":"s"}`))
	h.on(http.MethodPost, "/payments/recipients", httpmock.NewErrorResponder(errConnReset))

	params := validVirtualAccountParams()
	params.BVN = "12345678901"
	_, err := h.client.VirtualAccounts.Create(context.Background(), params)
	require.Error(t, err)
	p := validRecipientParams()
	p.Identification = &payments.Identification{Number: "NIN-55667788", Image: "aGVsbG8gd29ybGQ="}
	_, err = h.client.Recipients.Create(context.Background(), p)
	require.Error(t, err)

	logs := sink.text()
	lines := sink.lines(t)
	require.Len(t, lines, 3, logs) // VA failure, recipient retry, recipient failure
	assert.Equal(t, "WARN", lines[0]["level"])
	assert.EqualValues(t, 400, lines[0]["status"])
	assert.Contains(t, lines[0]["error"], "HTTP 400")
	assert.Equal(t, "WARN", lines[2]["level"])
	assert.EqualValues(t, 2, lines[2]["attempts"])
	assert.Contains(t, lines[2]["error"], "connection reset")

	assertNoSecrets(t, logs)
	assert.NotContains(t, logs, "12345678901")
	assert.NotContains(t, logs, "55667788")
	assert.NotContains(t, logs, "aGVsbG8gd29ybGQ=")
}

func TestNoLoggerNoOutput(t *testing.T) {
	// Without WithLogger the SDK logs nothing, and go-retryablehttp's own
	// logger (which writes every URL to stderr) is off.
	h := newHarness(t)
	assert.Nil(t, payments.RetryLoggerForTest(h.client))
	h2, _ := loggedHarness(t, slog.LevelDebug)
	assert.Nil(t, payments.RetryLoggerForTest(h2.client))
}
