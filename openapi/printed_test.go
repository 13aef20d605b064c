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
// holds it to api/), with every text member set to s, and the violations a
// Strict contract finds in an answer that echoes s in its headers and as
// the name and value of its members.
func printTable(t *testing.T, s string) map[string][]any {
	t.Helper()
	c, err := openapi.Load()
	require.NoError(t, err)
	var v openapi.Violation
	printcheck.Fill(&v, s)
	req := httptest.NewRequest(http.MethodPost, "/payments/recipients", strings.NewReader(`{}`))
	body := `{"success":true,"message":"` + s + `","stan":"` + s + `","` + s + `":"` + s + `","data":{"id":"` + s + `","account_number":"` + s + `","` + s + `":1}}`
	err = c.Strict().CheckResponse(req, 201, http.Header{"Content-Type": {"application/json"}, "X-Echo": {s}}, []byte(body))
	require.Error(t, err)
	return map[string][]any{
		"openapi.Contract":   {c, c.Strict()},
		"openapi.Violation":  {v},
		"openapi.Violations": {openapi.Violations{&v}, err},
	}
}

// TestNoPrintedValueShowsASecret: a value of every exported type of
// openapi, and the violations found in an answer that echoes a secret or
// personal data everywhere, print (fmt, every verb) and log (slog) without
// it (the payments package's test of the same name covers the other
// packages).
func TestNoPrintedValueShowsASecret(t *testing.T) {
	printcheck.All(t, []string{"../api/github.com_paymentsapi_payments-go_openapi.txt"}, printTable)
}
