package openapi

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// The printed (fmt, every verb) and logged (log/slog) forms of a violation:
// its text (Error), with anything shaped like a credential or personal
// data masked in the parts the checked message supplied (a member's name in
// Where), as the SDK's own errors print. Test: TestNoPrintedValueShowsASecret.

// Format prints the violation's text (Error), with any verb, masked.
func (v Violation) Format(f fmt.State, _ rune) { redact.Formatted(f, v.Error()) }

// LogValue logs the violation's fields, masked.
func (v Violation) LogValue() slog.Value { return redact.LogFields(v) }

// Format prints the violations' text (Error), one a line, with any verb,
// masked.
func (vs Violations) Format(f fmt.State, _ rune) {
	for i, v := range vs {
		if i > 0 {
			_, _ = io.WriteString(f, "\n")
		}
		_, _ = io.WriteString(f, redact.String(v.Error(), nil))
	}
}

// LogValue logs the violations' text, one a line, masked.
func (vs Violations) LogValue() slog.Value {
	lines := make([]string, len(vs))
	for i, v := range vs {
		lines[i] = redact.String(v.Error(), nil)
	}
	return slog.StringValue(strings.Join(lines, "\n"))
}
