// Package paymentsotel traces and measures the payments SDK with
// OpenTelemetry: a span for every operation of a payments.Client, a child
// span for every HTTP attempt (with the trace context sent in its headers),
// a span for every webhook delivery a webhook.Handler answers, and
// the metrics to alert on.
//
// It uses only the OpenTelemetry API, as the OpenTelemetry guidance for
// libraries asks: your program chooses and configures the SDK and the
// exporters. Without options it uses the global providers and propagator
// (otel.GetTracerProvider, otel.GetMeterProvider, otel.GetTextMapPropagator),
// so it follows whatever your program sets there, even later.
//
//	inst, err := paymentsotel.New()
//	...
//	client, err := payments.NewClient(apiKey, append(inst.ClientOptions(), payments.WithBaseURL(baseURL))...)
//	handler := webhook.NewHandler(verifier, processEvent, inst.HandlerOption())
//
// # Traces
//
// An operation (client.Payments.Initiate, say) is an INTERNAL span named after
// payments.Operation.Name ("payments.initiate"; "do" for Client.Do) with
// payments.operation, payments.attempts, http.response.status_code (the
// final one), payments.stan and payments.idempotency_key when there is one,
// and payments.wait (seconds) when the operation waited for the Client's rate
// limit or a 429's pause: a wait, not an attempt, so no attempt span covers it.
// A failed operation has status Error and error.type: the status code
// ("422") for an answer of the service, "timeout", "malformed_response",
// "connection_closed", "connect_error", "dns_error", "tls_error", or the Go
// type of any other error. A cancelled context is not an error: the span's
// status stays unset. Calls the SDK refuses before sending anything (a
// *payments.ValidationError) make no span: the
// Client reports an operation from the moment it is sent.
//
// Each HTTP attempt is a CLIENT span, a child of the operation's, that follows
// the HTTP client semantic conventions: named "{method} {url.template}"
// ("POST /payments/initiate"), with http.request.method, server.address,
// server.port, url.full, url.template, http.response.status_code,
// http.request.resend_count on a retry, and error.type (the status code of an
// answer of 400 or more, or the kinds above). url.full never holds an id: it
// is the URL with the template's placeholders ("/payments/recipients/{id}").
// For Client.Do, which has no template, url.template is left out, the span is
// named "{method}", and url.full has the query dropped and every path segment
// that holds a digit (other than a version such as "v1") or is longer than 24
// characters replaced by "{id}".
//
// Do not wrap the SDK's http.Client transport in otelhttp as well: the
// attempt spans are already the network spans, and each attempt would be
// recorded twice.
//
// # Metrics
//
//   - http.client.request.duration (histogram, s): every HTTP attempt, by
//     http.request.method, server.address, server.port, url.template,
//     http.response.status_code and error.type.
//   - payments.client.operation.duration (histogram, s): every operation,
//     retries and waits included, by payments.operation, payments.outcome
//     ("success", "error" or "cancelled") and error.type.
//   - payments.client.retries (counter): every retry, by payments.operation
//     and payments.retry.reason (the previous attempt's status code or error
//     type, such as "503" or "timeout").
//   - payments.webhook.deliveries (counter): every webhook delivery, by
//     payments.webhook.outcome and payments.webhook.event_type.
//
// Metric attributes are all low-cardinality: no ids, stans, keys or amounts.
//
// # Webhooks
//
// Each delivery is a span named "payments.webhook" with
// payments.webhook.event_type, payments.webhook.event_id,
// payments.webhook.outcome, http.request.method and
// http.response.status_code. It continues the trace context of the request's
// headers, as a SERVER span; when the request's context already carries a
// span of this process (your server is instrumented with otelhttp, say) it is
// an INTERNAL child of that span instead. Its status is Error when your
// function failed (outcome "failed", 500) or the claim store did
// ("store_unavailable", 503); refusals (bad signature, not an event,
// duplicate) are answers, not errors. Your EventFunc's context carries the
// span, so the spans of your own processing are its children.
//
// # Privacy
//
// No attribute holds the API key, a request or response body, an amount, an
// account number or any personal data, and no error message is recorded
// (error texts may quote what the service sent): errors are described by
// error.type alone.
package paymentsotel
