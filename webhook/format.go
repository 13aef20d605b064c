package webhook

import (
	"fmt"
	"log/slog"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// The printed (fmt, every verb, through Format) and logged (log/slog,
// through LogValue) forms of the package's types. A Handler and a store
// print as what they are, never their contents: fmt, for a verb such as %s
// or %d that a type does not answer, prints a struct's fields whole, the
// verifier's secrets among them. A result or a claim prints its fields, with
// anything shaped like a credential (a whsec_ secret, a hex secret, a JWT)
// and personal data masked in the event ids and errors the service's
// deliveries put in it. Test: TestNoPrintedValueShowsASecret
// (printed_test.go in the payments package).

// Format prints the handler, with any verb, as its verifier's kind, never
// the verifier's secrets: webhook.Handler(*webhook.SignatureVerifier).
func (h *Handler) Format(f fmt.State, _ rune) { fmt.Fprintf(f, "webhook.Handler(%T)", h.verifier) }

// LogValue logs the handler as Format prints it.
func (h *Handler) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(h)) }

// Format prints the store, with any verb, as the number of events it
// remembers done, never their ids.
func (s *MemoryClaimStore) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "webhook.MemoryClaimStore{done: %d}", s.Len())
}

// LogValue logs the store as Format prints it.
func (s *MemoryClaimStore) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(s)) }

// Format prints the result's fields, with any verb, masked.
func (r DeliveryResult) Format(f fmt.State, _ rune) { redact.FormatFields(f, r) }

// LogValue logs the result's fields, masked.
func (r DeliveryResult) LogValue() slog.Value { return redact.LogFields(r) }

// Format prints the result's fields, with any verb, masked.
func (r ReconcileResult) Format(f fmt.State, _ rune) { redact.FormatFields(f, r) }

// LogValue logs the result's fields, masked.
func (r ReconcileResult) LogValue() slog.Value { return redact.LogFields(r) }

// Format prints the checkpoint's fields, with any verb, masked.
func (c Checkpoint) Format(f fmt.State, _ rune) { redact.FormatFields(f, c) }

// LogValue logs the checkpoint's fields, masked.
func (c Checkpoint) LogValue() slog.Value { return redact.LogFields(c) }

// Format prints the claim's fields, with any verb, masked.
func (c Claim) Format(f fmt.State, _ rune) { redact.FormatFields(f, c) }

// LogValue logs the claim's fields, masked.
func (c Claim) LogValue() slog.Value { return redact.LogFields(c) }
