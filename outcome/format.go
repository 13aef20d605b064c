package outcome

import (
	"fmt"
	"log/slog"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// The printed (fmt, every verb, through Format) and logged (log/slog,
// through LogValue) forms of the package's types. A Tracker and a
// MemoryStore print as what they are, never the outcomes they hold (fmt, for
// a verb such as %s that a type does not answer, would print a struct's
// fields whole). An outcome, a step, a result and a conflict print their
// fields with anything shaped like a credential and personal data masked in
// the ids, references and statuses the service's events put in them.
// encoding/json keeps them whole. Test: TestNoPrintedValueShowsASecret
// (printed_test.go in the payments package).

// Format prints the tracker, with any verb, as its store's kind:
// outcome.Tracker(*outcome.MemoryStore).
func (t *Tracker) Format(f fmt.State, _ rune) { fmt.Fprintf(f, "outcome.Tracker(%T)", t.store) }

// LogValue logs the tracker as Format prints it.
func (t *Tracker) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(t)) }

// Format prints the store, with any verb, as the number of outcomes it
// holds, never the outcomes.
func (m *MemoryStore) Format(f fmt.State, _ rune) {
	m.mu.Lock()
	n := len(m.byID)
	m.mu.Unlock()
	fmt.Fprintf(f, "outcome.MemoryStore{outcomes: %d}", n)
}

// LogValue logs the store as Format prints it.
func (m *MemoryStore) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(m)) }

// Format prints the error's text (Error), with any verb, masked.
func (e ConflictError) Format(f fmt.State, _ rune) { redact.Formatted(f, e.Error()) }

// LogValue logs the conflict's fields, masked.
func (e ConflictError) LogValue() slog.Value { return redact.LogFields(e) }

// Format prints the outcome's fields, with any verb, masked.
func (o Outcome) Format(f fmt.State, _ rune) { redact.FormatFields(f, o) }

// LogValue logs the outcome's fields, masked.
func (o Outcome) LogValue() slog.Value { return redact.LogFields(o) }

// Format prints the step's fields, with any verb, masked.
func (s Step) Format(f fmt.State, _ rune) { redact.FormatFields(f, s) }

// LogValue logs the step's fields, masked.
func (s Step) LogValue() slog.Value { return redact.LogFields(s) }

// Format prints the result's fields, with any verb, masked.
func (r Result) Format(f fmt.State, _ rune) { redact.FormatFields(f, r) }

// LogValue logs the result's fields, masked.
func (r Result) LogValue() slog.Value { return redact.LogFields(r) }

// Format prints the subject's fields, with any verb, masked.
func (s Subject) Format(f fmt.State, _ rune) { redact.FormatFields(f, s) }

// LogValue logs the subject's fields, masked.
func (s Subject) LogValue() slog.Value { return redact.LogFields(s) }
