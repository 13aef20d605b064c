package paymentsotel_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/internal/printcheck"
	"github.com/paymentsapi/payments-go/paymentsotel"
)

// printTable is a value of every exported type of paymentsotel
// (printcheck.All holds it to api/). They hold no text from outside: the
// check is that a new type, or a new member, is printed here too.
func printTable(t *testing.T, _ string) map[string][]any {
	t.Helper()
	in, err := paymentsotel.New()
	require.NoError(t, err)
	return map[string][]any{
		"paymentsotel.Instrumentation": {in},
		"paymentsotel.Option":          {paymentsotel.WithTracerProvider(nil)},
	}
}

// TestNoPrintedValueShowsASecret: a value of every exported type of
// paymentsotel prints (fmt, every verb) and logs (slog) without the API
// key, a webhook secret or personal data (the payments package's test of
// the same name covers the other packages).
func TestNoPrintedValueShowsASecret(t *testing.T) {
	printcheck.All(t, []string{"../api/github.com_paymentsapi_payments-go_paymentsotel.txt"}, printTable)
}
