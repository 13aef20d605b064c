package webhook

// SetMaxPendingCompletions lowers the cap of background completions of h
// (maxPendingCompletions), so that a test reaches it with a few events.
func SetMaxPendingCompletions(h *Handler, n int) { h.bg.limit = int64(n) }
