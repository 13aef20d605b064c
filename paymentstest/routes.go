package paymentstest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	payments "github.com/paymentsapi/payments-go"
)

// route is one operation: of the Payments API, or of the admin API that
// withAdminAPI turns on.
type route struct {
	method string
	// pattern is an escaped path. A segment {name} matches any non-empty
	// segment, whose unescaped value is the handler's apiRequest.param.
	pattern string
	h       handlerFunc
	// segs is pattern split at "/", without the leading empty segment.
	segs []string
}

// The route tables: every operation of the fake, in one place. Paths under
// adminPrefix are the admin API's; ServeHTTP sends them to serveAdmin (never
// faulted, slowed down or logged in Requests) when withAdminAPI is on, and
// answers them as unknown paths otherwise.
var (
	apiRoutes = compileRoutes([]route{
		{method: http.MethodPost, pattern: "/payments/recipients", h: (*Server).createRecipient},
		{method: http.MethodPut, pattern: "/payments/recipients/{id}", h: (*Server).updateRecipient},
		{method: http.MethodPost, pattern: "/payments/initiate", h: (*Server).initiatePayment},
		{method: http.MethodPost, pattern: "/payments/confirm", h: (*Server).confirmPayment},
		{method: http.MethodPost, pattern: "/accounts/virtual-accounts", h: (*Server).createVirtualAccount},
		{method: http.MethodPost, pattern: "/webhooks/events/trigger/{event_id}", h: (*Server).triggerEvent},
		{method: http.MethodGet, pattern: "/webhooks/events", h: (*Server).listEvents},
	})
	adminRoutes = compileRoutes([]route{
		{method: http.MethodGet, pattern: "/_sandbox/clock", h: (*Server).adminClock},
		{method: http.MethodPost, pattern: "/_sandbox/clock/advance", h: (*Server).adminAdvance},
		{method: http.MethodPost, pattern: "/_sandbox/virtual-accounts/{account_number}/incoming-payments", h: (*Server).adminIncomingPayment},
		{method: http.MethodGet, pattern: "/_sandbox/faults", h: (*Server).adminFaults},
		{method: http.MethodPost, pattern: "/_sandbox/faults", h: (*Server).adminInjectFault},
		{method: http.MethodDelete, pattern: "/_sandbox/faults", h: (*Server).adminClearFaults},
		{method: http.MethodGet, pattern: "/_sandbox/deliveries", h: (*Server).adminDeliveries},
		{method: http.MethodPost, pattern: "/_sandbox/deliveries/wait", h: (*Server).adminWaitDeliveries},
		{method: http.MethodGet, pattern: "/_sandbox/webhook-url", h: (*Server).adminWebhookURL},
		{method: http.MethodPut, pattern: "/_sandbox/webhook-url", h: (*Server).adminSetWebhookURL},
		{method: http.MethodGet, pattern: "/_sandbox/webhook-retries", h: (*Server).adminWebhookRetries},
		{method: http.MethodPut, pattern: "/_sandbox/webhook-retries", h: (*Server).adminSetWebhookRetries},
		{method: http.MethodPost, pattern: "/_sandbox/events/{id}/redeliver", h: (*Server).adminRedeliverTo},
		{method: http.MethodPost, pattern: "/_sandbox/events/trigger", h: (*Server).adminTrigger},
		{method: http.MethodGet, pattern: "/_sandbox/redeliveries", h: (*Server).adminRedeliveries},
		{method: http.MethodPost, pattern: "/_sandbox/deliveries/pause", h: (*Server).adminPause},
		{method: http.MethodPost, pattern: "/_sandbox/deliveries/resume", h: (*Server).adminResume},
		{method: http.MethodPost, pattern: "/_sandbox/payments/{id}/settle", h: (*Server).adminSettle},
		{method: http.MethodGet, pattern: "/_sandbox/delivery-chaos", h: (*Server).adminChaos},
		{method: http.MethodPut, pattern: "/_sandbox/delivery-chaos", h: (*Server).adminSetChaos},
		{method: http.MethodPost, pattern: "/_sandbox/events/redeliver-failed", h: (*Server).adminRedeliverFailed},
	})
)

func compileRoutes(rs []route) []route {
	for i := range rs {
		rs[i].segs = strings.Split(strings.TrimPrefix(rs[i].pattern, "/"), "/")
	}
	return rs
}

// match reports whether the segments of an escaped path fit the route, and
// returns the (still escaped) segment that its parameter matched.
func (rt *route) match(segs []string) (param string, ok bool) {
	if len(segs) != len(rt.segs) {
		return "", false
	}
	for i, want := range rt.segs {
		switch {
		case strings.HasPrefix(want, "{"):
			if segs[i] == "" {
				return "", false
			}
			param = segs[i]
		case segs[i] != want:
			return "", false
		}
	}
	return param, true
}

// route finds the operation for a method and an escaped path, among the
// admin routes or the API's. A path that names no resource gives 404, a
// method the resource does not take 405 with an Allow header.
func (s *Server) route(method, path string, admin bool) (handlerFunc, string, *response) {
	table, what := apiRoutes, "endpoint"
	if admin {
		table, what = adminRoutes, "admin endpoint"
	}
	notFound := func() (handlerFunc, string, *response) {
		return nil, "", s.fail(http.StatusNotFound, payments.CodeNotFound, "no such "+what+": "+path)
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var allowed []string
	for i := range table {
		rt := &table[i]
		param, ok := rt.match(segs)
		if !ok {
			continue
		}
		if rt.method != method {
			allowed = append(allowed, rt.method)
			continue
		}
		if param != "" {
			p, err := url.PathUnescape(param)
			if err != nil {
				return notFound()
			}
			param = p
		}
		return rt.h, param, nil
	}
	if len(allowed) == 0 {
		return notFound()
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	return nil, "", s.fail(http.StatusMethodNotAllowed, payments.CodeMethodNotAllowed,
		fmt.Sprintf("%s is not allowed on %s; use %s", method, path, allow)).withHeader("Allow", allow)
}
