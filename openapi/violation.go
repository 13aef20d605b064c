package openapi

import (
	"fmt"
	"strings"
)

// Violation is one point where a request, a response or a webhook delivery
// differs from the document.
type Violation struct {
	// Assumption is the Topic of the row of docs/assumptions.md that the
	// point belongs to (the x-assumption of the document), or "" when the
	// point is the published specification's own.
	Assumption string
	// Operation is the document's operationId ("payments.initiate"), or
	// "webhook.event" for a delivery; "" when no operation matched.
	Operation string
	// Where names the part: "response body /data/quote/total_amount",
	// "request header Idempotency-Key", "response status".
	Where string
	// Detail says what differs. It names no value that could be a secret
	// or personal data (no account number, no key).
	Detail string
	// Unknown is true for what the document allows but does not describe
	// (a member it does not name, a status it does not list). Only a
	// Strict contract reports these.
	Unknown bool
}

// Error describes the violation and where to look next.
func (v *Violation) Error() string {
	var b strings.Builder
	b.WriteString("openapi: ")
	if v.Operation != "" {
		b.WriteString(v.Operation + ": ")
	}
	b.WriteString(v.Where + ": " + v.Detail)
	switch {
	case v.Unknown:
		b.WriteString(" (allowed, but not described by payments-api.yaml)")
	case v.Assumption != "":
		fmt.Fprintf(&b, " (breaks the assumption %q: its row in docs/assumptions.md names the override)", v.Assumption)
	default:
		b.WriteString(" (differs from the published specification)")
	}
	return b.String()
}

// Violations is what a check returns when anything differs: every
// violation found, in the order found. errors.As(err, &v) with v a
// *Violation finds the first.
type Violations []*Violation

// Error lists the violations, one a line.
func (vs Violations) Error() string {
	lines := make([]string, len(vs))
	for i, v := range vs {
		lines[i] = v.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns each *Violation, for errors.As and errors.Is.
func (vs Violations) Unwrap() []error {
	out := make([]error, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// result turns the violations found into a check's error: nil for none.
func result(vs []*Violation) error {
	if len(vs) == 0 {
		return nil
	}
	return Violations(vs)
}
