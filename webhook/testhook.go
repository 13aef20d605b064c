package webhook

import (
	"time"

	"github.com/paymentsapi/payments-go/internal/testhook"
)

// The settings only the SDK's tests need: internal/testhook reaches them
// (issue 35: no exported test seam; the defaults serve merchants).
func init() {
	testhook.HandlerRecentlyDone = func(n int) any {
		return HandlerOption(func(h *Handler) {
			if n >= 0 {
				h.recentSize = n
			}
		})
	}
	testhook.HandlerClaimStoreTimeout = func(d time.Duration) any {
		return HandlerOption(func(h *Handler) {
			if d > 0 {
				h.storeTimeout = d
			}
		})
	}
}
