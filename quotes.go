package payments

import (
	"sync"
	"time"
)

// maxRememberedQuotes bounds the quotes a Client remembers for the expiry
// check in Confirm.
const maxRememberedQuotes = 4096

// quoteBook remembers the expiry of the quotes a Client issued, so that
// Confirm can refuse an expired one without a round trip.
type quoteBook struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (b *quoteBook) remember(id string, expires time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = make(map[string]time.Time)
	}
	if len(b.m) >= maxRememberedQuotes {
		// Forget the quotes that expired longest ago: anything past its
		// expiry by more than a lifetime is of no further use.
		cutoff := expires.Add(-2 * QuoteLifetime)
		for k, exp := range b.m {
			if exp.Before(cutoff) {
				delete(b.m, k)
			}
		}
		for k := range b.m {
			if len(b.m) < maxRememberedQuotes {
				break
			}
			delete(b.m, k)
		}
	}
	b.m[id] = expires
}

func (b *quoteBook) expiry(id string) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	exp, ok := b.m[id]
	return exp, ok
}
