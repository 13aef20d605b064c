package paymentsotel_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goList runs go list with args and returns the words it printed.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	// go test puts the toolchain that runs it first on PATH.
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		t.Fatalf("go list %v: %v\n%s", args, err, exitErr.Stderr)
	}
	require.NoError(t, err)
	return strings.Fields(string(out))
}

// goListDeps returns the packages that pkg imports, directly or not, without
// its tests.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	deps := goList(t, "-deps", pkg)
	require.Contains(t, deps, pkg, "go list lists %s itself", pkg)
	return deps
}

// TestRootPackageImportsNoOpenTelemetry: a program that uses the SDK without
// this package builds no OpenTelemetry code.
func TestRootPackageImportsNoOpenTelemetry(t *testing.T) {
	for _, pkg := range []string{"github.com/paymentsapi/payments-go", "github.com/paymentsapi/payments-go/paymentstest"} {
		for _, dep := range goListDeps(t, pkg) {
			assert.False(t, strings.HasPrefix(dep, "go.opentelemetry.io/"), "%s imports %s", pkg, dep)
		}
	}
}

// TestUsesOnlyTheAPI: this package imports the OpenTelemetry API, never its
// SDK or an exporter (the program's choice), and of the payments SDK only its
// public API.
func TestUsesOnlyTheAPI(t *testing.T) {
	const self = "github.com/paymentsapi/payments-go/paymentsotel"
	for _, dep := range goListDeps(t, self) {
		if strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk") || strings.HasPrefix(dep, "go.opentelemetry.io/otel/exporters") {
			t.Errorf("paymentsotel depends on %s", dep)
		}
	}
	imports := goList(t, "-f", `{{join .Imports " "}}`, self)
	require.Contains(t, imports, "github.com/paymentsapi/payments-go")
	require.Contains(t, imports, "go.opentelemetry.io/otel/trace")
	for _, imp := range imports {
		if strings.HasPrefix(imp, "github.com/") {
			assert.Contains(t, []string{"github.com/paymentsapi/payments-go", "github.com/paymentsapi/payments-go/webhook"}, imp, "paymentsotel imports only the SDK's public API")
		}
	}
}
