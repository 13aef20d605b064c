package paymentstest

import (
	"fmt"
	"time"
)

// MaxDeliveryDelay is the longest DeliveryChaos.Delay.
const MaxDeliveryDelay = time.Hour

// DeliveryChaos makes webhook deliveries misbehave the way real senders
// do, so that a receiver's handling of late, duplicated and reordered
// events is tested: WithDeliveryChaos sets it at start, SetDeliveryChaos at
// run time (payments-sandbox: -deliver-late, -deliver-twice,
// -deliver-newest-first, and PUT /_sandbox/delivery-chaos). The zero value
// is an honest sender. It applies to the events produced after it is set.
type DeliveryChaos struct {
	// Delay holds each event's first attempt for this long (wall clock),
	// from 0 to MaxDeliveryDelay.
	Delay time.Duration
	// Duplicate delivers each event twice: two deliveries of the same
	// body (so the same event id), the second marked Redelivery.
	Duplicate bool
	// NewestFirst starts, among the attempts that are due, the newest
	// queued first, so that events produced within Delay of each other
	// (or while deliveries are paused) arrive newest first, for example
	// payment.completed before payment.initiated. Use it with
	// WithWebhookConcurrency(1) for a strict order.
	NewestFirst bool
}

func (c DeliveryChaos) check() error {
	if c.Delay < 0 || c.Delay > MaxDeliveryDelay {
		return fmt.Errorf("the delay %s must be from 0 to %s", c.Delay, MaxDeliveryDelay)
	}
	return nil
}

// WithDeliveryChaos makes deliveries late, duplicated or reordered, as
// DeliveryChaos says. TestDeliveryChaos* prove each.
func WithDeliveryChaos(c DeliveryChaos) Option {
	return func(cfg *config) {
		if err := c.check(); err != nil {
			cfg.fail("WithDeliveryChaos: %v", err)
			return
		}
		cfg.chaos = c
	}
}

// SetDeliveryChaos changes how deliveries misbehave from now on (the zero
// DeliveryChaos stops it). It fails, and changes nothing, for a Delay
// outside 0 to MaxDeliveryDelay.
func (s *Server) SetDeliveryChaos(c DeliveryChaos) error {
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

// DeliveryChaosSetting returns the DeliveryChaos in effect.
func (s *Server) DeliveryChaosSetting() DeliveryChaos {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.chaos
}

// WithWebhookConcurrency sets how many delivery attempts may be in flight
// at once (default DefaultWebhookConcurrency). Each delivery keeps its own
// retry schedule whatever n is; with n = 1 the first attempts go out one at
// a time in the order the events occurred. n must be from 1 to 64.
func WithWebhookConcurrency(n int) Option {
	return func(c *config) {
		if n < 1 || n > 64 {
			c.fail("WithWebhookConcurrency(%d) must be from 1 to 64", n)
			return
		}
		c.webhookConcurrency = n
	}
}
