package payments

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// WebhooksService triggers test webhook deliveries. Reach it as
// Client.Webhooks. Receiving webhooks needs no Client: see NewWebhookHandler and
// ConstructEvent.
type WebhooksService struct{ client *Client }

// TriggerResult is the service's answer to a test-event trigger. The
// specification does not describe it: Data is whatever the service returned
// (possibly nothing), and LastResponse gives the stan and message.
type TriggerResult struct {
	apiResource

	// EventType is the event that was asked for.
	EventType EventType
	// Data is the envelope's data member as received, or nil.
	Data json.RawMessage
}

// Trigger asks the service to send a test webhook of the given kind (for
// example EventPaymentCompleted) to the URL configured in the merchant
// dashboard (POST /webhooks/events/trigger/{event_id}). The name is
// path-escaped; names the SDK does not know are sent as given.
//
// Use it to check a receiver end to end. Serve a handler made by
// NewWebhookHandler, with a SignatureVerifier holding the endpoint's signing
// secret, at the URL the dashboard has for your account (a tunnel to your
// machine works for development), then call Trigger and watch your EventFunc
// get the event:
//
//	v, err := payments.NewSignatureVerifier([]string{os.Getenv("PAYMENTS_WEBHOOK_SECRET")})
//	...
//	http.Handle("POST /webhooks", payments.NewWebhookHandler(v, func(ctx context.Context, ev *payments.Event) error {
//		log.Printf("got %s %s", ev.Type, ev.ID)
//		return nil
//	}))
//	...
//	_, err = client.Webhooks.Trigger(ctx, payments.EventPaymentCompleted)
//
// A nil error means only that the service accepted the request: the delivery
// itself arrives asynchronously, and the handler treats it like any other
// (verified, deduplicated by event id, retried by the service on a non-200).
// A 401 logged by your handler usually means a wrong secret. What a test
// event's data contains is not specified, so an EventFunc should not move
// money on it without checking. For tests without the service, sign payloads
// yourself with SignPayload, or use the fake in paymentstest.
func (s *WebhooksService) Trigger(ctx context.Context, eventType EventType, opts ...RequestOption) (*TriggerResult, error) {
	var v validator
	v.required("event_id", string(eventType), maxEventTypeLen)
	if eventType == "." || eventType == ".." {
		// PathEscape leaves dots alone: the segment would climb the path.
		v.add("event_id", `must be an event name, not "." or ".."`)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	var data json.RawMessage
	r, err := s.client.do(ctx, opWebhooksTrigger, "/webhooks/events/trigger/"+url.PathEscape(string(eventType)), nil, &data, opts)
	if err != nil {
		return nil, err
	}
	res := &TriggerResult{EventType: eventType, Data: data}
	res.setResponse(r, data)
	return res, nil
}

var opWebhooksTrigger = &operation{Operation: Operation{Name: "webhooks.trigger", Method: http.MethodPost, PathTemplate: "/webhooks/events/trigger/{event_id}"}, dataOptional: true}
