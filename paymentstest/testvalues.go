package paymentstest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/shopspring/decimal"
)

// Test values: inputs that make the fake take a path other than success,
// as a card processor's test card numbers do, so that a merchant's failure
// handling runs end to end. Every other value behaves as before. The table
// in the package documentation and in the README lists them.
const (
	// AccountNumberFailsVerification is an account number whose recipient
	// fails verification: creating it (201) sends recipient.created, then
	// recipient.verification_failed instead of recipient.verified.
	// Initiating a payment to it is refused with 422
	// "recipient_verification_failed"; updating the recipient to another
	// account number verifies it again.
	AccountNumberFailsVerification = "4000000002"
	// AccountNumberVerifiesLate is an account number whose recipient is
	// verified only after the processing delay (Sandbox.ProcessingDelay):
	// recipient.created at once, recipient.verified later. Until then,
	// initiating a payment to it is refused with 422
	// "recipient_not_verified"; wait for recipient.verified and try again.
	AccountNumberVerifiesLate = "4000000005"
	// AmountFails is an amount whose payment fails when confirmed: confirm
	// answers 200 with status "failed" and sends payment.failed. Nothing is
	// drawn from the balance.
	AmountFails = "4000.02"
	// AmountRejected is an amount whose payment is rejected when
	// confirmed, as one above the recipient's limit is: confirm answers 200
	// with status "rejected" and sends payment.rejected. Nothing is drawn
	// from the balance.
	AmountRejected = "4000.03"
	// AmountCompletesLate is an amount whose payment completes only after
	// the processing delay: confirm answers 200 with status "pending" (the
	// quote is used up, and the total drawn from the balance), and
	// payment.completed follows.
	AmountCompletesLate = "4000.05"
)

// defaultProcessingDelay is how long a late verification
// (AccountNumberVerifiesLate) or a late payment (AmountCompletesLate) takes
// unless Sandbox.ProcessingDelay says otherwise.
const defaultProcessingDelay = 2 * time.Second

// accountDigits is the fake's rule for a recipient's account_number, which
// the specification leaves open: 8 to 17 digits (8 in the United Kingdom,
// 10 for a Nigerian NUBAN and the fake's virtual accounts, up to 17 in the
// United States). An IBAN or other form goes in payment_details.
var accountDigits = regexp.MustCompile(`^[0-9]{8,17}$`)

// accountDigitsRule is the message for an account_number that breaks it.
const accountDigitsRule = "must be 8 to 17 digits (an IBAN goes in payment_details.account_number)"

// verification is the state of a recipient's verification.
type verification int

const (
	verified        verification = iota // recipient.verified was sent
	verifying                           // recipient.verified will follow
	verifyingFailed                     // recipient.verification_failed was sent
)

// verificationOf is the outcome a recipient's account number gives.
func verificationOf(accountNumber string) verification {
	switch accountNumber {
	case AccountNumberFailsVerification:
		return verifyingFailed
	case AccountNumberVerifiesLate:
		return verifying
	}
	return verified
}

// amountOutcome is what confirm does with a payment, by its amount.
type amountOutcome int

const (
	completes amountOutcome = iota
	fails
	rejected
	completesLate
)

var (
	amountFails         = decimal.RequireFromString(AmountFails)
	amountRejected      = decimal.RequireFromString(AmountRejected)
	amountCompletesLate = decimal.RequireFromString(AmountCompletesLate)
)

// outcomeOf is the outcome of confirming a payment of amount, in any
// currency; "4000.020" is AmountFails too.
func outcomeOf(amount decimal.Decimal) amountOutcome {
	switch {
	case amount.Equal(amountFails):
		return fails
	case amount.Equal(amountRejected):
		return rejected
	case amount.Equal(amountCompletesLate):
		return completesLate
	}
	return completes
}

// isTestAccountNumber reports whether n is one of the test values, which
// the fake never gives a virtual account.
func isTestAccountNumber(n string) bool {
	return n == AccountNumberFailsVerification || n == AccountNumberVerifiesLate
}

// recipientAccountNumber checks a recipient's account_number: the rule of
// payment_details' (letters, digits, spaces, dashes), and accountDigits.
func (p *problems) recipientAccountNumber(field, v string) {
	switch {
	case v == "":
	case !accountNumberPattern.MatchString(v) || !accountDigits.MatchString(v):
		p.add(field, accountDigitsRule)
	}
}

// verify starts the verification of a recipient's account number and sends
// its outcome: recipient.verified, recipient.verification_failed, or
// recipient.verified after the processing delay. data is the recipient's
// JSON as the event carries it. s.mu must be held.
func (s *Server) verify(r *recipient, data json.RawMessage) {
	r.VerifyRound++
	r.Verify = verificationOf(r.AccountNumber)
	switch r.Verify {
	case verified:
		s.emit(payments.EventRecipientVerified, data)
	case verifyingFailed:
		s.emit(payments.EventRecipientVerificationFailed, data)
	case verifying:
		round := r.VerifyRound
		s.later.after(s.delay, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if r.VerifyRound != round { // its account number changed since
				return
			}
			r.Verify = verified
			late, err := json.Marshal(r.json())
			if err != nil { // the server's own types: cannot happen
				return
			}
			s.emit(payments.EventRecipientVerified, late)
		})
	}
}

// unverified refuses a payment to a recipient that is not verified, or
// returns nil. s.mu must be held.
func (s *Server) unverified(r *recipient) *response {
	switch r.Verify {
	case verifyingFailed:
		return s.fail(http.StatusUnprocessableEntity, payments.CodeRecipientVerificationFailed,
			"recipient "+r.ID+" failed verification (recipient.verification_failed): update its account_number to verify it again",
			fieldProblem{Field: "recipient_id", Message: "names a recipient that failed verification"})
	case verifying:
		return s.fail(http.StatusUnprocessableEntity, payments.CodeRecipientNotVerified,
			"recipient "+r.ID+" is not verified yet: initiate the payment again after recipient.verified",
			fieldProblem{Field: "recipient_id", Message: "names a recipient whose verification is not finished"})
	}
	return nil
}
