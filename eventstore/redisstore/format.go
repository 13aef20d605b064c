package redisstore

import (
	"fmt"
	"log/slog"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// The printed (fmt, every verb) and logged (log/slog) forms of the stores:
// their kind and key prefix, never their client (its options hold the
// Redis password), with anything shaped like a credential or personal data
// masked in the prefix. Test: TestNoPrintedValueShowsASecret.

// Format prints the store, with any verb, as its key prefix:
// redisstore.ClaimStore(payments:webhook-event:).
func (s *ClaimStore) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "redisstore.ClaimStore(%s)", redact.String(s.opts.prefix, nil))
}

// LogValue logs the store as Format prints it.
func (s *ClaimStore) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(s)) }

// Format prints the store, with any verb, as its key prefix:
// redisstore.OutcomeStore(payments:outcome:).
func (s *OutcomeStore) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "redisstore.OutcomeStore(%s)", redact.String(s.prefix, nil))
}

// LogValue logs the store as Format prints it.
func (s *OutcomeStore) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(s)) }
