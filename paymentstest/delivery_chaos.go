package paymentstest

import (
	"fmt"
	"time"
)

// maxDeliveryDelay is the longest deliveryChaos.Delay.
const maxDeliveryDelay = time.Hour

// deliveryChaos makes webhook deliveries misbehave the way real senders
// do, so that a receiver's handling of late, duplicated and reordered
// events is tested: withDeliveryChaos sets it at start, SetDeliveryChaos at
// run time (payments-sandbox: -deliver-late, -deliver-twice,
// -deliver-newest-first, and PUT /_sandbox/delivery-chaos). The zero value
// is an honest sender. It applies to the events produced after it is set.
type deliveryChaos struct {
	// Delay holds each event's first attempt for this long (wall clock),
	// from 0 to maxDeliveryDelay.
	Delay time.Duration
	// Duplicate delivers each event twice: two deliveries of the same
	// body (so the same event id), the second marked Redelivery.
	Duplicate bool
	// NewestFirst starts, among the attempts that are due, the newest
	// queued first, so that events produced within Delay of each other
	// (or while deliveries are paused) arrive newest first, for example
	// payment.completed before payment.initiated. Use it with
	// withWebhookConcurrency(1) for a strict order.
	NewestFirst bool
}

func (c deliveryChaos) check() error {
	if c.Delay < 0 || c.Delay > maxDeliveryDelay {
		return fmt.Errorf("the delay %s must be from 0 to %s", c.Delay, maxDeliveryDelay)
	}
	return nil
}

// withDeliveryChaos makes deliveries late, duplicated or reordered, as
// deliveryChaos says. TestDeliveryChaos* prove each.
func withDeliveryChaos(c deliveryChaos) Option {
	return func(cfg *config) {
		if err := c.check(); err != nil {
			cfg.fail("WithSandbox: DeliveryDelay: %v", err)
			return
		}
		cfg.chaos = c
	}
}

// setDeliveryChaos changes how deliveries misbehave from now on (the zero
// deliveryChaos stops it). It fails, and changes nothing, for a Delay
// outside 0 to maxDeliveryDelay.
func (s *Server) setDeliveryChaos(c deliveryChaos) error {
	if err := c.check(); err != nil {
		return fmt.Errorf("paymentstest: SetDeliveryChaos: %w", err)
	}
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	d.chaos = c
	d.poke()
	return nil
}

// deliveryChaosSetting returns the deliveryChaos in effect.
func (s *Server) deliveryChaosSetting() deliveryChaos {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.chaos
}

// withWebhookConcurrency sets how many delivery attempts may be in flight
// at once (default defaultWebhookConcurrency). Each delivery keeps its own
// retry schedule whatever n is; with n = 1 the first attempts go out one at
// a time in the order the events occurred. n must be from 1 to 64.
func withWebhookConcurrency(n int) Option {
	return func(c *config) {
		if n < 1 || n > 64 {
			c.fail("WithSandbox: WebhookConcurrency(%d) must be from 1 to 64", n)
			return
		}
		c.webhookConcurrency = n
	}
}
