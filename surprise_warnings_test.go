package payments_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// defaultLogSink makes slog.Default() write JSON lines into a sink for the
// rest of the test, and puts the default back after it. The root package's
// tests do not run in parallel, so no other test's client writes there.
func defaultLogSink(t *testing.T) *logSink {
	t.Helper()
	sink := &logSink{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: slog.LevelInfo})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return sink
}

// surprising answers a confirm with two distinct surprises (a status and an
// unknown member) and a recipients create with a third (an unknown member).
func surprising(h *harness) {
	h.on(http.MethodPost, "/payments/confirm", jsonResponder(200, okEnvelope(strings.Replace(
		strings.Replace(confirmedPaymentJSON, `"completed"`, `"processing"`, 1), `"is_completed": true,`, `"is_completed": true, "settled_at": "SECRET-VALUE-4242",`, 1))))
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(strings.Replace(recipientJSON, `"limit"`, `"verified": true, "limit"`, 1))))
}

// meetSurprises makes calls that meet every surprise of surprising three
// times each.
func meetSurprises(t *testing.T, c *payments.Client) {
	t.Helper()
	for range 3 {
		_, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: "q"})
		require.NoError(t, err, "a surprise never fails the call")
		_, err = c.Recipients.Create(context.Background(), validRecipientParams())
		require.NoError(t, err)
	}
}

// wantSurpriseLines are the warnings meetSurprises gives, one per distinct
// surprise, in the order met.
var wantSurpriseLines = []payments.Surprise{
	{Kind: payments.SurprisePaymentStatus, Detail: "processing"},
	{Kind: payments.SurpriseUnknownField, Detail: "data.settled_at"},
	{Kind: payments.SurpriseUnknownField, Detail: "data.verified"},
}

// assertSurpriseLines checks that sink holds one warning for each of want,
// in order, and no value of an unknown field nor a secret.
func assertSurpriseLines(t *testing.T, sink *logSink, want []payments.Surprise) {
	t.Helper()
	lines := surpriseLines(t, sink)
	require.Len(t, lines, len(want), sink.text())
	for i, s := range want {
		assert.Equal(t, "WARN", lines[i]["level"])
		assert.Equal(t, string(s.Kind), lines[i]["kind"])
		assert.Equal(t, s.Detail, lines[i]["detail"])
		assert.NotEmpty(t, lines[i]["operation"])
	}
	assert.NotContains(t, sink.text(), "SECRET-VALUE-4242", "an unknown field's value is never logged")
	assertNoSecrets(t, sink.text())
}

// TestSurpriseWarnsOnceOnSlogDefault: a Client without a logger warns of
// each distinct surprise once, on slog.Default() as it is when the surprise
// is met (set after the Client was made), at warning level; a second Client
// warns of them once more, its own.
func TestSurpriseWarnsOnceOnSlogDefault(t *testing.T) {
	h := newHarness(t)
	surprising(h)
	sink := defaultLogSink(t)
	meetSurprises(t, h.client)
	assertSurpriseLines(t, sink, wantSurpriseLines)
	for _, l := range sink.lines(t) {
		assert.Equal(t, surpriseLogMessage, l["msg"], "without a logger only the surprises are logged")
	}

	other := newHarness(t)
	surprising(other)
	sink = defaultLogSink(t)
	meetSurprises(t, other.client)
	assertSurpriseLines(t, sink, wantSurpriseLines)
}

// TestDiscardingLoggerSilencesSurprises: a Client given a logger that
// discards logs nothing for surprises, on slog.Default() or anywhere, while
// observers still get every one; a nil logger is no logger (slog.Default()).
func TestDiscardingLoggerSilencesSurprises(t *testing.T) {
	def := defaultLogSink(t)
	var counter surpriseCounter
	h := newHarness(t, payments.WithLogger(slog.New(slog.DiscardHandler)), payments.WithObserver(counter.observe))
	surprising(h)
	meetSurprises(t, h.client)
	assert.Empty(t, def.text())
	assert.Len(t, counter.all(), len(wantSurpriseLines), "observers still get them")

	nilLogger := newHarness(t, payments.WithLogger(slog.New(slog.DiscardHandler)), payments.WithLogger(nil))
	surprising(nilLogger)
	meetSurprises(t, nilLogger.client)
	assertSurpriseLines(t, def, wantSurpriseLines)
}

// TestSurpriseWarnsOnWithLoggerInstead: with WithLogger the warnings go to
// that logger, once each, and none to slog.Default().
func TestSurpriseWarnsOnWithLoggerInstead(t *testing.T) {
	def := defaultLogSink(t)
	h, sink := loggedHarness(t, slog.LevelWarn)
	surprising(h)
	meetSurprises(t, h.client)
	assertSurpriseLines(t, sink, wantSurpriseLines)
	assert.Empty(t, def.text())
}
