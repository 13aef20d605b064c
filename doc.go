// Package payments is the typed Go client for the merchant Payments API:
// recipients, two-step payments (a quote, then its confirmation), virtual
// accounts and webhooks. Share one Client: it is safe for concurrent use. The
// journey and its errors (the package Example runs it on paymentstest's fake):
//
//	client, err := payments.NewClientFromEnv() // PAYMENTS_API_KEY, PAYMENTS_BASE_URL
//	if err != nil { return err }
//	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{
//		AccountNumber: "0123456789", AccountName: "Ada Okafor",
//		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN"})
//	if err != nil { return err }
//	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
//		Amount: payments.Amount{Decimal: decimal.RequireFromString("15000.50")}, Currency: "NGN",
//		RecipientID: recipient.ID, Reference: "order-1042"}) // a quote: payment.Quote
//	if err != nil { return err }
//	payment, err = client.Payments.Confirm(ctx, payment.ConfirmParams()) // executes it
//	var apiErr *payments.APIError
//	switch { // errors are typed: branch on what to do
//	case errors.Is(err, payments.ErrInvalidParams): // a *ValidationError: nothing was sent
//	case errors.Is(err, payments.CodeQuoteExpired): // nothing was paid: initiate again
//	case errors.As(err, &apiErr) && !apiErr.Temporary(): // refused; quote apiErr.Stan to support
//	case err != nil: // unknown outcome: retry with the key of payments.IdempotencyKeyOf(err)
//	case payment.Status != payments.PaymentStatusCompleted: // rejected, say above the limit
//	}
//
// Where the specification is silent the SDK assumes (docs/assumptions.md),
// and says when the service differs: a quote or an amount it cannot read,
// or one that disagrees with what was sent, is a *MalformedResponseError,
// never a zero; anything else it does not assume (an unknown field or
// status, another error body) is a Surprise, logged once and counted.
package payments
