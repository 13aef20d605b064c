package pgstore

import (
	"fmt"
	"log/slog"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// Format prints the configuration's fields, with any verb, with anything
// shaped like a credential or personal data masked, as the SDK's own types
// print (test: TestNoPrintedValueShowsASecret).
func (c QueueConfig) Format(f fmt.State, _ rune) { redact.FormatFields(f, c) }

// LogValue logs the configuration's fields, masked as Format masks them.
func (c QueueConfig) LogValue() slog.Value { return redact.LogFields(c) }
