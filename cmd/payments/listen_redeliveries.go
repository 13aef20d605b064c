package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	payments "github.com/paymentsapi/payments-go"
)

// redeliveries follows the sandbox's log of redeliveries (GET
// /_sandbox/redeliveries), so that an event redelivered from the dashboard,
// the admin API or "payments events resend" to the webhook URL is also
// forwarded to listen's receiver, like a first delivery. The event list
// that listen polls shows each event once, so it cannot see them. Against
// the real service, or a sandbox without its admin API, it does nothing.
type redeliveries struct {
	c     *cli
	fwd   *forwarder
	out   *lines
	types []payments.EventType
	after int64 // the seq of the last redelivery seen
	off   bool
}

type redeliveryLog struct {
	LastSeq      int64 `json:"last_seq"`
	Redeliveries []struct {
		Seq          int64           `json:"seq"`
		Body         json.RawMessage `json:"body"`
		ToWebhookURL bool            `json:"to_webhook_url"`
	} `json:"redeliveries"`
}

// followRedeliveries starts from the sandbox's latest redelivery: those
// asked for from now on are forwarded.
func (c *cli) followRedeliveries(ctx context.Context, fwd *forwarder, out *lines, types []payments.EventType) *redeliveries {
	r := &redeliveries{c: c, fwd: fwd, out: out, types: types}
	var log redeliveryLog
	if _, err := c.admin(ctx, "GET", "/_sandbox/redeliveries", nil, &log); err != nil {
		r.off = true // not a sandbox with its admin API
		return r
	}
	r.after = log.LastSeq
	return r
}

// poll forwards the redeliveries asked for since the last poll. A failure
// is left to the next poll (the event list's poll reports the service
// being down).
func (r *redeliveries) poll(ctx context.Context) {
	if r.off || ctx.Err() != nil {
		return
	}
	var log redeliveryLog
	if _, err := r.c.admin(ctx, "GET", fmt.Sprintf("/_sandbox/redeliveries?after=%d", r.after), nil, &log); err != nil {
		return
	}
	if log.LastSeq < r.after { // the sandbox restarted: its log starts again
		r.after = 0
		return
	}
	for _, rd := range log.Redeliveries {
		r.after = rd.Seq
		if !rd.ToWebhookURL {
			continue // sent elsewhere on purpose (events resend --to)
		}
		ev, err := payments.ParseEvent(rd.Body)
		if err != nil {
			r.out.printf("redelivery %d: the sandbox sent an event that does not parse: %v", rd.Seq, err)
			continue
		}
		if len(r.types) > 0 && !slices.Contains(r.types, ev.Type) {
			continue
		}
		r.out.printf("%s  %s  redelivery asked for in the sandbox", show(string(ev.Type)), show(ev.ID))
		r.fwd.forward(ctx, ev)
	}
}
