package paymentstest

import "math/rand/v2"

// randomFault is a Fault with a Rate: it breaks each matching request with
// probability Rate, drawn from its own generator.
type randomFault struct {
	f   Fault
	rng *rand.Rand
}

// pick draws the fault's chance for one request that matches it. The caller
// holds the fault queue's lock, which also guards the generator.
func (r *randomFault) pick(method, path string) (Fault, bool) {
	if (r.f.Method != "" && r.f.Method != method) || (r.f.Path != "" && r.f.Path != path) {
		return Fault{}, false
	}
	if r.rng.Float64() >= r.f.Rate {
		return Fault{}, false
	}
	f := r.f
	f.Times = 1
	return f, true
}
