package main

import (
	"context"
	"encoding/json"
	"fmt"

	payments "github.com/paymentsapi/payments-go"
)

var triggerUsage = `Usage: payments trigger EVENT-TYPE

Asks the service to send a test webhook event of EVENT-TYPE to the webhook URL
of your account (Webhooks.Trigger: POST /webhooks/events/trigger/{event_id}),
and prints the service's answer with its stan. The event is delivered
asynchronously; "payments listen" forwards it to a local receiver too.

Event types of the specification (others are sent as given):
` + eventTypeList()

// trigger is "payments trigger EVENT-TYPE".
func (c *cli) trigger(ctx context.Context, args []string) error {
	fs := c.newFlagSet("trigger", triggerUsage)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("trigger takes one event type, such as payment.completed (got %d arguments; see payments trigger --help)", len(pos))
	}
	eventType := payments.EventType(pos[0])
	client, err := c.client()
	if err != nil {
		return err
	}
	defer client.Close()
	if !knownEventKind(eventType) {
		fmt.Fprintf(c.stderr, "payments: %q is not an event type of the specification; sending it as given\n", pos[0])
	}
	res, err := client.Webhooks.Trigger(ctx, eventType)
	if err != nil {
		return err
	}
	r := res.LastResponse()
	fmt.Fprintf(c.stdout, "Triggered %s: HTTP %d, stan %s\n", show(string(eventType)), r.StatusCode, orNone(r.Stan))
	if r.Message != "" {
		fmt.Fprintf(c.stdout, "  message:  %s\n", r.Message)
	}
	// The answer's data is not specified; the sandbox's names the event.
	var ev struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(res.Data, &ev) == nil && ev.ID != "" {
		fmt.Fprintf(c.stdout, "  event id: %s\n", show(ev.ID))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
