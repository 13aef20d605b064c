package payments_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// TestErrorCodesMatchWithErrorsIs: an *APIError matches its code with
// errors.Is, prints the bare code, and a caller never compares strings.
func TestErrorCodesMatchWithErrorsIs(t *testing.T) {
	srv := paymentstest.NewServer()
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()
	r, err := c.Recipients.Create(ctx, &payments.RecipientCreateParams{
		AccountNumber: "0123456789", AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
	})
	require.NoError(t, err)
	params := &payments.PaymentInitiateParams{Amount: decimal.RequireFromString("10"), Currency: "NGN", RecipientID: r.ID, Reference: "order-codes"}
	p, err := c.Payments.Initiate(ctx, params)
	require.NoError(t, err)
	_, err = c.Payments.Initiate(ctx, params)
	assert.ErrorIs(t, err, payments.CodeDuplicateReference)
	assert.NotErrorIs(t, err, payments.CodeQuoteExpired)
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, payments.CodeDuplicateReference, apiErr.Code)
	assert.Equal(t, "code duplicate_reference", fmt.Sprintf("code %s", apiErr.Code), "a code prints as itself")

	_, err = c.Payments.Confirm(ctx, p.ConfirmParams())
	require.NoError(t, err)
	_, err = c.Payments.Confirm(ctx, p.ConfirmParams())
	assert.ErrorIs(t, err, payments.CodeQuoteAlreadyConfirmed)
	assert.False(t, errors.Is(err, payments.ErrQuoteExpired))
}

// TestErrorCodesAgreeWithTheFake: the fake keeps its own copy of the codes
// (it must not share client code); both lists must say the same.
func TestErrorCodesAgreeWithTheFake(t *testing.T) {
	pairs := map[payments.ErrorCode]string{
		payments.CodeValidationFailed:      paymentstest.CodeValidationFailed,
		payments.CodeQuoteExpired:          paymentstest.CodeQuoteExpired,
		payments.CodeQuoteAlreadyConfirmed: paymentstest.CodeQuoteAlreadyConfirmed,
		payments.CodeDuplicateReference:    paymentstest.CodeDuplicateReference,
		payments.CodeIdempotencyKeyReused:  paymentstest.CodeIdempotencyKeyReused,
		payments.CodeIdempotencyInProgress: paymentstest.CodeIdempotencyInProgress,
		payments.CodeInvalidIdempotencyKey: paymentstest.CodeInvalidIdempotencyKey,
		payments.CodeUnauthorized:          paymentstest.CodeUnauthorized,
		payments.CodeNotFound:              paymentstest.CodeNotFound,
		payments.CodeWebhookNotConfigured:  paymentstest.CodeWebhookNotConfigured,
		payments.CodeInvalidJSON:           paymentstest.CodeInvalidJSON,
		payments.CodeMethodNotAllowed:      paymentstest.CodeMethodNotAllowed,
		payments.CodeUnsupportedMediaType:  paymentstest.CodeUnsupportedMediaType,
		payments.CodePayloadTooLarge:       paymentstest.CodePayloadTooLarge,
		payments.CodeInternal:              paymentstest.CodeInternal,
		payments.CodeShuttingDown:          paymentstest.CodeShuttingDown,
	}
	for sdk, fake := range pairs {
		assert.Equal(t, string(sdk), fake)
	}
}
