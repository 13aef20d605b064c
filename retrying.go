package payments

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/paymentsapi/payments-go/internal/retry"
)

// This file plugs the Client's retry decisions into go-retryablehttp: which
// outcome is retried (internal/retry), how many retries a call may make and
// how long it waits (the call's own settings, which its callState carries),
// what the retry budget allows, and what the waits between attempts are.
// go-retryablehttp only runs the loop: its own limit and back-off are
// disabled, since they are one setting for every call of the Client.

// newRetryClient returns the retry loop over hc, with c's hooks.
func (c *Client) newRetryClient(hc *http.Client) *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient: hc,
		Logger:     nil, // go-retryablehttp's own logger writes URLs to stderr
		// Each call's own limit is enforced by checkRetry.
		RetryMax:   math.MaxInt32,
		CheckRetry: c.checkRetry,
		// The wait is the call's (st.backoff), waited in prepareRetry with
		// the client-wide waits, where the call's state is at hand.
		Backoff:        func(_, _ time.Duration, _ int, _ *http.Response) time.Duration { return 0 },
		PrepareRetry:   c.prepareRetry,
		ErrorHandler:   keepLastResponse,
		RequestLogHook: c.onAttempt,
	}
}

// checkRetry runs after each attempt. It notes a 429's pause for the whole
// Client and refunds the budget on a success; then it decides whether to
// retry: never once the context has ended, only an outcome retry.Check
// allows, within the call's WithMaxRetries, and only if the retry budget
// has the tokens (otherwise the call ends now, marked as budget-exhausted).
// A retry's wait is computed here, while the response is at hand.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st := stateOf(ctx)
	st.attemptEnded()
	c.pause.note(resp, c.now())
	if resp != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 && c.budget != nil {
		if st.retryCost > 0 {
			c.budget.refund(st.retryCost)
		} else {
			c.budget.refund(c.budget.SuccessRefund)
		}
	}
	ok, cerr := retry.Check(ctx, st.retryable, resp, err)
	if !ok || cerr != nil || st.attempts > st.maxRetries {
		return false, cerr
	}
	if c.budget != nil {
		cost := c.budget.costOf(err)
		if !c.budget.spend(cost) {
			st.budgetExhausted = true
			return false, nil
		}
		st.retryCost = cost
	}
	st.backoff = retry.Backoff(st.waitMin, st.waitMax, st.attempts-1, resp, c.now())
	return true, nil
}

// prepareRetry waits before a retry: the back-off, then what every attempt
// waits for (see beforeAttempt). An error ends the call.
func (c *Client) prepareRetry(req *http.Request) error {
	st := stateOf(req.Context())
	return c.beforeAttempt(st, st.backoff)
}

// onAttempt runs just before each attempt is sent: it counts it, and logs a
// retry.
func (c *Client) onAttempt(_ retryablehttp.Logger, req *http.Request, attempt int) {
	st := stateOf(req.Context())
	st.attempts = attempt + 1
	st.attemptStarted()
	if attempt > 0 && c.logger != nil {
		c.logger.LogAttrs(req.Context(), slog.LevelInfo, "payments: retrying request",
			slog.String("operation", st.op.Name), slog.String("method", st.op.Method),
			slog.String("path", pathOnly(st.path)), slog.Int("attempt", attempt+1))
	}
}

// keepLastResponse runs when go-retryablehttp gives up. It hands back the
// final response with its status and body intact, so the caller gets a full
// *APIError, and passes connection and context errors through (a wait that
// the context ended included: the last response's body is drained by then).
func keepLastResponse(resp *http.Response, err error, _ int) (*http.Response, error) {
	if resp != nil && err != nil && isContextErr(err) {
		resp.Body.Close()
		return nil, err
	}
	if resp != nil {
		return resp, nil
	}
	return nil, err
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
