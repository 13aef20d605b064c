package paymentstest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// RandomFaults makes the server break a random share of requests, for chaos
// tests: each request that no pending fault (InjectFault, FailNext, ...)
// breaks is broken, with probability Rate, by one of Faults chosen with equal
// chance among those whose Method and Path match it (list a fault twice to
// make it twice as likely). Times is ignored: random faults last until
// turned off.
//
// The choices come from a PCG generator seeded with Seed and are drawn one
// request at a time, in the order requests arrive: the same seed and the
// same order of requests give the same faults. Log the seed of a failing
// run to replay it.
type RandomFaults struct {
	// Rate is the probability, from 0 to 1, that a request is broken.
	Rate float64
	// Faults are the faults to choose from.
	Faults []Fault
	// Seed seeds the generator.
	Seed uint64
}

type randomFaults struct {
	rate   float64
	faults []Fault
	rng    *rand.Rand
}

// SetRandomFaults turns random faults on, replacing any random faults set
// before; a Rate of 0 turns them off (so does ClearFaults). It returns an
// error, and changes nothing, for a Rate outside 0 to 1, a positive Rate
// without faults, or a fault that InjectFault would refuse.
//
//	srv.SetRandomFaults(paymentstest.RandomFaults{
//		Rate: 0.3,
//		Faults: []paymentstest.Fault{
//			{Kind: paymentstest.FaultStatus, Status: 503},
//			{Kind: paymentstest.FaultDropAfterWork},
//			{Kind: paymentstest.FaultLatency, Latency: 20 * time.Millisecond},
//		},
//		Seed: seed,
//	})
func (s *Server) SetRandomFaults(rf RandomFaults) error {
	if math.IsNaN(rf.Rate) || rf.Rate < 0 || rf.Rate > 1 {
		return fmt.Errorf("paymentstest: RandomFaults.Rate must be from 0 to 1, not %v", rf.Rate)
	}
	if rf.Rate > 0 && len(rf.Faults) == 0 {
		return errors.New("paymentstest: RandomFaults with a positive Rate needs Faults")
	}
	for _, f := range rf.Faults {
		if err := checkFault(f); err != nil {
			return err
		}
	}
	var r *randomFaults
	if rf.Rate > 0 {
		r = &randomFaults{
			rate:   rf.Rate,
			faults: append([]Fault(nil), rf.Faults...),
			rng:    rand.New(rand.NewPCG(rf.Seed, rf.Seed^0x9e3779b97f4a7c15)),
		}
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.random = r
	return nil
}

// pick draws the random fault of one request. The caller holds the fault
// queue's lock, which also guards the generator.
func (r *randomFaults) pick(method, path string) (Fault, bool) {
	if r == nil || r.rng.Float64() >= r.rate {
		return Fault{}, false
	}
	var match []int
	for i, f := range r.faults {
		if (f.Method == "" || f.Method == method) && (f.Path == "" || f.Path == path) {
			match = append(match, i)
		}
	}
	if len(match) == 0 {
		return Fault{}, false
	}
	f := r.faults[match[r.rng.IntN(len(match))]]
	f.Times = 1
	return f, true
}
