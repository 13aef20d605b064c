package storetest

import (
	"context"
	"iter"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// neverDelivered returns the ids of events processed by no delivery: the
// sender gave up every copy (or they were lost).
func neverDelivered(ids []string, effects func([]string) map[string]int) []string {
	counts := effects(ids)
	var out []string
	for _, id := range ids {
		if counts[id] == 0 {
			out = append(out, id)
		}
	}
	return out
}

// reconcileRun does what a merchant does after the senders gave up: it
// runs Handler.Reconcile on a live replica over the service's list of
// events (all of them), until no event is left in progress (a claim of a
// dead replica lapses within a lease; a pending completion lands), at most
// five runs. It returns how many events it processed.
func reconcileRun(t *testing.T, rs *replicaSet, ids []string) int {
	list := func(yield func(*payments.Event, error) bool) {
		for _, id := range ids {
			ev, err := payments.ParseEvent(EventBody(id))
			if !yield(ev, err) {
				return
			}
		}
	}
	var seq iter.Seq2[*payments.Event, error] = list
	processed := 0
	for try := 1; ; try++ {
		in := rs.live()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		res, err := in.h.Reconcile(ctx, seq)
		cancel()
		processed += res.Processed
		if err == nil && res.InProgress == 0 && res.Failed == 0 {
			return processed
		}
		if try == 5 {
			t.Errorf("reconcile after the run: %d in progress, %d failed, error %v", res.InProgress, res.Failed, err)
			return processed
		}
		time.Sleep(time.Second)
	}
}
