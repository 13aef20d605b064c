package payments

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// WebhooksService triggers test webhook deliveries. Reach it as
// Client.Webhooks. Receiving webhooks needs no Client: see Handler and
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
// dashboard (POST /webhooks/events/trigger/{event_id}). Use it to check a
// receiver end to end: run your Handler behind that URL with the endpoint's
// signing secret, call Trigger, and watch your handler function get the
// event. The name is path-escaped; names the SDK does not know are sent as
// given.
func (s *WebhooksService) Trigger(ctx context.Context, eventType EventType, opts ...RequestOption) (*TriggerResult, error) {
	var v validator
	v.required("event_id", string(eventType), maxEventTypeLen)
	if err := v.err(); err != nil {
		return nil, err
	}
	var data json.RawMessage
	cl := &call{method: http.MethodPost, path: "/webhooks/events/trigger/" + url.PathEscape(string(eventType)), out: &data, dataOptional: true}
	if err := s.client.call(ctx, cl, opts); err != nil {
		return nil, err
	}
	res := &TriggerResult{EventType: eventType, Data: data}
	res.setResponse(cl.resp, data)
	return res, nil
}
