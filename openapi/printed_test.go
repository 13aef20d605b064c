package openapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/internal/printcheck"
	"github.com/paymentsapi/payments-go/openapi"
)

// printTable is a value of every exported type of openapi (printcheck.All
// holds it to api/): the violations a Strict contract finds in an answer
// that echoes s in its headers and in the value of every member, known or
// not. (A violation names the members it is about, as sent, and never a
// value.)
func printTable(t *testing.T, s string) map[string][]any {
	t.Helper()
	c, err := openapi.Load()
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/payments/recipients", strings.NewReader(`{}`))
	body := `{"success":true,"message":"` + s + `","stan":"` + s + `","echo":"` + s + `",` +
		`"data":{"id":"` + s + `","account_number":"` + s + `","created_at":"` + s + `","limit":"` + s + `","echo":"` + s + `"}}`
	err = c.Strict().CheckResponse(req, 201, http.Header{"Content-Type": {"application/json"}, "X-Echo": {s}}, []byte(body))
	var vs openapi.Violations
	require.ErrorAs(t, err, &vs)
	require.NotEmpty(t, vs)
	return map[string][]any{
		"openapi.Contract":   {c, c.Strict()},
		"openapi.Violation":  {vs[0], *vs[len(vs)-1]},
		"openapi.Violations": {vs, err},
	}
}

// TestNoPrintedValueShowsASecret: a value of every exported type of
// openapi, the violations found in an answer that echoes a secret or
// personal data in every header and value, print (fmt, every verb) and log (slog) without
// it (the payments package's test of the same name covers the other
// packages).
func TestNoPrintedValueShowsASecret(t *testing.T) {
	printcheck.All(t, []string{"../api/github.com_paymentsapi_payments-go_openapi.txt"}, printTable)
}
