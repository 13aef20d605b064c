package payments

// ErrorCode is a machine-readable error code of the service, as APIError.Code
// carries it. The specification publishes no list: the constants below are
// the codes the SDK assumes and paymentstest sends (see the README's
// Assumptions), each with what to do; any other code passes through as
// received. An ErrorCode is also an error, so that errors.Is(err, code)
// matches an *APIError that carries it.
type ErrorCode string

// Error codes and what to do about each.
const (
	// CodeValidationFailed: APIError.Errors lists the bad fields; fix the
	// input. Nothing was done.
	CodeValidationFailed ErrorCode = "validation_failed"
	// CodeQuoteExpired: the service refused a Confirm because the quote's
	// five minutes ran out. Nothing was paid: initiate a new payment, with
	// new idempotency keys (the old keys replay the old answers).
	CodeQuoteExpired ErrorCode = "quote_expired"
	// CodeQuoteAlreadyConfirmed: this quote was confirmed before, by a call
	// with another idempotency key. The payment may be done: look it up by
	// reference (webhooks, dashboard) and never initiate it again.
	CodeQuoteAlreadyConfirmed ErrorCode = "quote_already_confirmed"
	// CodeDuplicateReference: a payment with this reference exists. It is
	// the same order: find that payment rather than pay again.
	CodeDuplicateReference ErrorCode = "duplicate_reference"
	// CodeIdempotencyKeyReused: the key was used before with a different
	// body. A bug in the caller: give each operation its own key.
	CodeIdempotencyKeyReused ErrorCode = "idempotency_key_reused"
	// CodeIdempotencyInProgress (409): the first call with this key is still
	// running. Retry the same call later; the SDK already retries it.
	CodeIdempotencyInProgress ErrorCode = "idempotency_in_progress"
	// CodeInvalidIdempotencyKey: the key is not acceptable (the SDK checks
	// length and characters before sending).
	CodeInvalidIdempotencyKey ErrorCode = "invalid_idempotency_key"
	// CodeUnauthorized (401): the API key is wrong, revoked, or belongs to
	// another environment than the base URL.
	CodeUnauthorized ErrorCode = "unauthorized"
	// CodeNotFound (404): no such resource for this merchant; check the id.
	CodeNotFound ErrorCode = "not_found"
	// CodeWebhookNotConfigured: Trigger needs a webhook URL set for the
	// account (the dashboard, or the sandbox's -webhook-url).
	CodeWebhookNotConfigured ErrorCode = "webhook_not_configured"
	// CodeInvalidJSON: the service could not parse the body. With the typed
	// methods a bug: report it with the stan. With Client.Do, check params.
	CodeInvalidJSON ErrorCode = "invalid_json"
	// CodeMethodNotAllowed, CodeUnsupportedMediaType and
	// CodePayloadTooLarge: a Client.Do call the service does not take.
	CodeMethodNotAllowed     ErrorCode = "method_not_allowed"
	CodeUnsupportedMediaType ErrorCode = "unsupported_media_type"
	CodePayloadTooLarge      ErrorCode = "payload_too_large"
	// CodeInternal (500) and CodeShuttingDown (503): the service failed;
	// the SDK retries, and a later retry with the same key is safe.
	CodeInternal     ErrorCode = "internal_error"
	CodeShuttingDown ErrorCode = "shutting_down"
	// CodeInsufficientBalance: Confirm was refused because the merchant's
	// balance in the payment's currency cannot cover the quote's total.
	// Nothing was paid. Fund the account (the sandbox:
	// paymentstest.WithBalance), then confirm again with a NEW idempotency
	// key before the quote expires: the same key replays this refusal
	// (APIError.Replayed).
	CodeInsufficientBalance ErrorCode = "insufficient_balance"
	// CodeRecipientVerificationFailed: Initiate was refused because the
	// recipient failed verification (recipient.verification_failed). Update
	// its account number, which verifies it again, or pay someone else;
	// either way initiate with a new idempotency key.
	CodeRecipientVerificationFailed ErrorCode = "recipient_verification_failed"
	// CodeRecipientNotVerified: Initiate was refused because the
	// recipient's verification is not finished. Initiate again once
	// recipient.verified has arrived, with a NEW idempotency key: the same
	// key replays this refusal (APIError.Replayed).
	CodeRecipientNotVerified ErrorCode = "recipient_not_verified"
)

// Error returns the code itself, so that an ErrorCode prints as the code and
// serves as the target of errors.Is.
func (c ErrorCode) Error() string { return string(c) }
