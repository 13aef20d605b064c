package payments

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
)

// This file holds the Client's retry budget: a token bucket shared by every
// call of one Client, so that many goroutines cannot all retry into an
// outage at once. The model is the retry quota of the AWS SDK for Go v2's
// standard retry mode.

// ErrRetryBudgetExhausted matches the error of a call that would have been
// retried but was not, because its Client's retry budget was empty (see
// RetryBudget): errors.Is(err, payments.ErrRetryBudgetExhausted). The error
// is still the *APIError or *TransportError of the last attempt, with its
// idempotency key: the outcome rules are those of any failed call.
var ErrRetryBudgetExhausted = errors.New("payments: retry budget exhausted")

// RetryBudget sets a Client's retry budget: a bucket of tokens, shared by all
// its calls, that each retry spends and successful calls refill. While the
// service answers, successes keep the bucket full and retries go on as
// usual; during an outage the bucket empties after a bounded number of
// retries, and from then on a call that would retry fails at once (its
// error matches ErrRetryBudgetExhausted) instead of adding load to a
// service that is down. Start from DefaultRetryBudget and change what you
// need.
type RetryBudget struct {
	// Tokens is the bucket's capacity, and what it holds when the Client
	// is made (at least 1).
	Tokens int
	// RetryCost is what a retry after an error status (429, 5xx, ...) or a
	// failed connection spends.
	RetryCost int
	// TimeoutCost is what a retry after a timed-out attempt spends: it is
	// dearer, since a timeout held the service's resources the whole time.
	TimeoutCost int
	// SuccessRefund is what a call that succeeds at its first attempt puts
	// back. A call that succeeds on a retry puts back that retry's cost
	// instead. The bucket never holds more than Tokens.
	SuccessRefund int
}

// DefaultRetryBudget returns the budget every Client has unless
// WithRetryBudget says otherwise: 500 tokens, 5 per retry, 10 per retry
// after a timeout, 1 back per success (the AWS SDK's standard retry mode).
func DefaultRetryBudget() RetryBudget {
	// A fresh client may make 100 retries after errors (50 after
	// timeouts) before it has to earn more, and earns one retry back per
	// five calls that succeed at once.
	return RetryBudget{Tokens: 500, RetryCost: 5, TimeoutCost: 10, SuccessRefund: 1}
}

// WithRetryBudget replaces the Client's retry budget (DefaultRetryBudget);
// WithRetryBudget(nil) turns it off, so that every call makes all the
// retries WithMaxRetries allows whatever the others do. The costs must not
// be negative nor above Tokens, and Tokens must be at least 1.
func WithRetryBudget(b *RetryBudget) Option {
	return optionFunc(func(c *clientConfig) error {
		if b == nil {
			c.budget = nil
			return nil
		}
		if b.Tokens < 1 || b.RetryCost < 0 || b.TimeoutCost < 0 || b.SuccessRefund < 0 ||
			b.RetryCost > b.Tokens || b.TimeoutCost > b.Tokens {
			return fmt.Errorf("%w: WithRetryBudget(%+v) needs Tokens >= 1 and costs from 0 to Tokens", ErrInvalidConfig, *b)
		}
		cp := *b
		c.budget = &cp
		return nil
	})
}

// retryBudget is a RetryBudget in use: the tokens left, changed atomically.
type retryBudget struct {
	RetryBudget
	left atomic.Int64
}

func newRetryBudget(b *RetryBudget) *retryBudget {
	if b == nil {
		return nil
	}
	rb := &retryBudget{RetryBudget: *b}
	rb.left.Store(int64(b.Tokens))
	return rb
}

// spend takes cost tokens and reports true, or takes none and reports false
// when fewer are left.
func (b *retryBudget) spend(cost int) bool {
	for {
		left := b.left.Load()
		if left < int64(cost) {
			return false
		}
		if b.left.CompareAndSwap(left, left-int64(cost)) {
			return true
		}
	}
}

// refund puts n tokens back, up to the capacity.
func (b *retryBudget) refund(n int) {
	for n > 0 {
		left := b.left.Load()
		if left >= int64(b.Tokens) {
			return
		}
		if b.left.CompareAndSwap(left, min(left+int64(n), int64(b.Tokens))) {
			return
		}
	}
}

// costOf is what a retry after err (nil for an error status) spends.
func (b *retryBudget) costOf(err error) int {
	var ne net.Error
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
		return b.TimeoutCost
	}
	return b.RetryCost
}
