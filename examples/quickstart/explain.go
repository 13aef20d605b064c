package main

import (
	"errors"
	"fmt"

	payments "github.com/paymentsapi/payments-go"
)

// explain turns an SDK error into a message that says what to do about it.
func explain(step string, err error) error {
	var (
		valErr *payments.ValidationError
		apiErr *payments.APIError
	)
	switch {
	case errors.As(err, &valErr):
		return fmt.Errorf("%s: fix the input, nothing was sent: %w", step, err)
	case errors.Is(err, payments.ErrUnauthorized):
		return fmt.Errorf("%s: the service refused the API key; check PAYMENTS_API_KEY: %w", step, err)
	case errors.Is(err, payments.CodeQuoteExpired):
		return fmt.Errorf("%s: the quote expired; initiate the payment again: %w", step, err)
	case errors.As(err, &apiErr) && !apiErr.Temporary():
		return fmt.Errorf("%s: the service refused (quote stan %s to support): %w", step, apiErr.Stan, err)
	}
	// The call may or may not have reached the service. Retrying with the
	// same idempotency key is safe: it cannot act twice.
	if key, ok := payments.IdempotencyKeyOf(err); ok {
		return fmt.Errorf("%s: retry later with payments.WithIdempotencyKey(%q): %w", step, key, err)
	}
	return fmt.Errorf("%s: %w", step, err)
}
