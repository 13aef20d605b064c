package paymentsotel

import (
	"context"
	"net/http"
	"strconv"

	"github.com/paymentsapi/payments-go/webhook"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// DeliveryObserver returns the webhook.DeliveryObserver that makes the
// "payments.webhook" span of each delivery and counts
// payments.webhook.deliveries. HandlerOption wraps it.
func (in *Instrumentation) DeliveryObserver() webhook.DeliveryObserver {
	return in.observeDelivery
}

func (in *Instrumentation) observeDelivery(ctx context.Context, r *http.Request) (context.Context, func(webhook.DeliveryResult)) {
	kind := trace.SpanKindServer
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && !sc.IsRemote() {
		// The server already made the request's span (otelhttp, say):
		// ours is a step inside it, not a second server span.
		kind = trace.SpanKindInternal
	} else {
		ctx = in.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	method, original := methodOf(r.Method)
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(method)}
	if original != "" {
		attrs = append(attrs, semconv.HTTPRequestMethodOriginalKey.String(original))
	}
	ctx, span := in.tracer.Start(ctx, SpanWebhook, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return ctx, func(res webhook.DeliveryResult) {
		failed := res.Outcome == webhook.OutcomeFailed || res.Outcome == webhook.OutcomeStoreUnavailable
		if span.IsRecording() {
			attrs := []attribute.KeyValue{WebhookOutcomeKey.String(string(res.Outcome))}
			if res.StatusCode > 0 {
				attrs = append(attrs, semconv.HTTPResponseStatusCodeKey.Int(res.StatusCode))
			}
			if res.EventType != "" {
				attrs = append(attrs, WebhookEventTypeKey.String(string(res.EventType)))
			}
			if res.EventID != "" {
				attrs = append(attrs, WebhookEventIDKey.String(res.EventID))
			}
			if failed {
				attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(res.StatusCode)))
				span.SetStatus(codes.Error, string(res.Outcome))
			}
			span.SetAttributes(attrs...)
		}
		span.End()

		mattrs := []attribute.KeyValue{WebhookOutcomeKey.String(string(res.Outcome))}
		if res.EventType != "" {
			mattrs = append(mattrs, WebhookEventTypeKey.String(string(res.EventType)))
		}
		in.deliveries.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(mattrs...)))
		for _, s := range res.Surprises {
			in.surprises.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(SurpriseKindKey.String(string(s.Kind)))))
		}
	}
}
