// Package payments is the typed Go client for the merchant Payments API:
// recipients (saved payment destinations), two-step payments (a quote, then
// its confirmation), virtual accounts that receive money, and webhooks.
//
// Make one Client and share it; it is safe for concurrent use:
//
//	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL))
//	recipient, err := client.Recipients.Create(ctx, &payments.RecipientCreateParams{...})
//	payment, err := client.Payments.Initiate(ctx, &payments.PaymentInitiateParams{...})
//	payment, err = client.Payments.Confirm(ctx, payment.ConfirmParams())
//
// Calls that create something carry an Idempotency-Key that is reused on
// every retry, so a retried call never pays or creates twice. Amounts are
// decimal.Decimal end to end. Params are validated before anything is sent,
// and every failure is a typed error: *ValidationError, *APIError,
// *TransportError, *MalformedResponseError or *QuoteExpiredError.
//
// The paymentstest package runs a stateful fake of the service in process,
// for tests and for trying the SDK without an API key.
package payments
