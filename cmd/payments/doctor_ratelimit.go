package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// rateHeaders are the headers that tell a rate limit.
var rateHeaders = []string{"Retry-After", "RateLimit", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Rate-Limit-Limit"}

// waitHeaders are the headers other than Retry-After in which a service
// may say how long to wait after a 429; the client reads none of them.
var waitHeaders = []string{"RateLimit-Reset", "X-RateLimit-Reset", "X-Rate-Limit-Reset", "RateLimit",
	"X-RateLimit-Retry-After", "X-Retry-After", "Retry-After-Ms", "X-Ms-Retry-After-Ms"}

// burstSize bounds the GET requests probeRateLimit sends to meet a 429.
const burstSize = 60

// probeRateLimit checks what a 429 carries: the wait in Retry-After, which
// the client honours, or only in headers it does not read. It looks at
// every answer seen; against a sandbox the merchant named, and when none
// was a 429, it first sends up to burstSize GET requests of one event, one
// after the other, and stops at the first 429 (or when doctor stops).
func (d *doctor) probeRateLimit(ctx context.Context) {
	const row = "Retryable answers"
	o := d.first429()
	sent := 0
	if o == nil && d.cfg.writes {
		for ; sent < burstSize && d.stopped == "" && o == nil; sent++ {
			if a := d.send(ctx, http.MethodGet, "/webhooks/events?limit=1", nil, true); a.err == nil && a.status == http.StatusTooManyRequests {
				o = a
			}
		}
	}
	if o == nil && d.stopped != "" {
		return // not reached: the row says why doctor stopped
	}
	if o == nil {
		why := fmt.Sprintf("no answer of the %d doctor saw was a 429", len(d.obs))
		if sent > 0 {
			why += fmt.Sprintf(", a burst of %d GET requests included: the sandbox's rate limit, if any, was not reached", sent)
		}
		d.rep.cannot(row, why)
		d.rep.decide(row)
		return
	}
	ra := o.header.Get("Retry-After")
	var others []string
	for _, h := range waitHeaders {
		if v := o.header.Get(h); v != "" {
			others = append(others, fmt.Sprintf("%s: %s", h, d.headerValue(v)))
		}
	}
	name, read := readWait(o.header)
	switch {
	case ra != "" && read:
		d.rep.hold(row, fmt.Sprintf("a 429 (%s) carries Retry-After: %s, which the client honours", o.what(), d.headerValue(ra)))
	case ra != "":
		d.rep.differ(row, fmt.Sprintf("a 429 (%s) carries Retry-After: %q, neither seconds nor an HTTP date: the client cannot honour it and backs off on its own", o.what(), d.headerValue(ra)))
	case read:
		d.rep.hold(row, fmt.Sprintf("a 429 (%s) carries no Retry-After, and its wait in %s, which the client reads as it reads Retry-After (seconds, as the IETF RateLimit draft defines them)",
			o.what(), strings.Join(others, ", ")))
	case len(others) > 0:
		d.rep.differ(row, fmt.Sprintf("a 429 (%s) carries its wait in %s, not in Retry-After: the client does not read %s, and retries on its own back-off, "+
			"perhaps before the limit resets", o.what(), strings.Join(others, ", "), orWhich(name)))
	default:
		d.rep.differ(row, fmt.Sprintf("a 429 (%s) carries no wait (no Retry-After, RateLimit-Reset or X-RateLimit-Reset): the client retries on its own back-off", o.what()))
	}
	d.rep.decide(row)
}

// headerValue is a header's value as a row shows it: secrets masked, and
// quoted when it would move a terminal's cursor.
func (d *doctor) headerValue(v string) string {
	v = d.scrubSecrets(v)
	if len(v) > 100 {
		v = v[:100] + "…"
	}
	if strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(v)
	}
	return v
}

// readWait says which header the client reads a 429's wait from, as the
// SDK's request path does (docs/retries.md; restated here, since this
// module may not import the SDK's internal packages): Retry-After in
// seconds or as an HTTP date; without it, RateLimit-Reset in whole seconds
// up to a day, or the t= of RateLimit. name is the header that carries
// the wait ("" when none does); read is false for the others
// (X-RateLimit-Reset, X-RateLimit-Retry-After, ...).
func readWait(h http.Header) (name string, read bool) {
	if ra := h.Get("Retry-After"); ra != "" {
		return "Retry-After", validRetryAfter(ra)
	}
	if v := h.Get("RateLimit-Reset"); v != "" {
		return "RateLimit-Reset", daySeconds(v)
	}
	if t := rateLimitT(h.Get("RateLimit")); t != "" {
		return "RateLimit", daySeconds(t)
	}
	for _, n := range waitHeaders {
		if h.Get(n) != "" {
			return n, false
		}
	}
	return "", false
}

// rateLimitT is the t= parameter of a RateLimit header
// ("default";r=0;t=30, or r=0, t=30 of earlier drafts), or "".
func rateLimitT(v string) string {
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' }) {
		if name, value, ok := strings.Cut(strings.TrimSpace(part), "="); ok && strings.EqualFold(strings.TrimSpace(name), "t") {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// daySeconds reports whether v is a whole number of seconds up to a day
// (a larger number is more likely a Unix time than a wait).
func daySeconds(v string) bool {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
	return err == nil && n <= 24*60*60
}

func orWhich(name string) string {
	if name == "" {
		return "them"
	}
	return name
}

// first429 is the first 429 doctor met, or nil.
func (d *doctor) first429() *observation {
	for _, o := range d.obs {
		if o.status == http.StatusTooManyRequests {
			return o
		}
	}
	return nil
}

// validRetryAfter reports whether v is a Retry-After the client reads:
// whole seconds, or an HTTP date.
func validRetryAfter(v string) bool {
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
		return n >= 0
	}
	_, err := http.ParseTime(v)
	return err == nil
}

// probeHeaders looks for rate-limit headers in every answer seen.
func (d *doctor) probeHeaders() {
	var seen []string
	for _, o := range d.obs {
		for _, h := range rateHeaders {
			if v := o.header.Get(h); v != "" {
				if s := fmt.Sprintf("%s: %s (%s)", h, v, o.what()); !slices.Contains(seen, s) {
					seen = append(seen, s)
				}
			}
		}
	}
	switch {
	case len(d.obs) == 0:
	case len(seen) > 0:
		d.rep.differ("Rate limit", d.scrub("the service publishes a rate limit: "+strings.Join(seen, "; ")))
	default:
		d.rep.hold("Rate limit", fmt.Sprintf("no rate-limit header in %d answers", len(d.obs)))
	}
	d.rep.decide("Rate limit")
}
