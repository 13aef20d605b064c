package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/paymentstest"
)

func TestOpen(t *testing.T) {
	f := startFake(t, paymentstest.WithSandbox(paymentstest.Sandbox{Dashboard: true}))
	code, stdout, stderr := runCLI(t, f.env, "open")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, f.URL()+"/_dashboard/\n", stdout)

	plain := startFake(t)
	code, _, stderr = runCLI(t, plain.env, "open")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "answered HTTP 401")
	code, _, _ = runCLI(t, plain.env, "open", "extra")
	assert.Equal(t, exitUsage, code)
}
