package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// The probes that ask and create nothing: they run in --production too.

// probeWithoutKey lists events without the key: 401 and the error
// envelope.
func (d *doctor) probeWithoutKey(ctx context.Context) {
	o := d.send(ctx, http.MethodGet, "/webhooks/events?limit=1", nil, false)
	if !d.check(o, "Error body", "Error body", "Error codes") {
		return
	}
	if o.status != http.StatusUnauthorized {
		d.rep.differ("Status codes", fmt.Sprintf("a request without the key answered HTTP %d, not 401", o.status))
	} else if code, _ := o.obj["code"].(string); code != "" && code != "unauthorized" {
		d.rep.differ("Error codes", d.scrub(fmt.Sprintf("a request without the key: code %q, not unauthorized", code)))
	}
}

// probeListEvents lists one page of events: the page's shape, and the
// service's clock for the triggered events.
func (d *doctor) probeListEvents(ctx context.Context) {
	o := d.send(ctx, http.MethodGet, "/webhooks/events?limit=1", nil, true)
	d.start = time.Now().Add(-time.Minute)
	if t, err := http.ParseTime(o.header.Get("Date")); err == nil {
		d.start = t.Add(-2 * time.Second)
	}
	if o.err != nil {
		d.rep.cannot("Base URL", d.scrub(fmt.Sprintf("no answer at %s: %s", d.cfg.baseURL, o.noAnswer())))
		d.rep.cannot("List events", d.scrub(o.noAnswer()))
		return
	}
	if o.status == http.StatusNotFound {
		d.rep.differ("List events", "GET /webhooks/events answered 404: the service lists events elsewhere, or not at all")
		return
	}
	if d.check(o, "List events", "List events", "Status codes") && o.obj != nil {
		d.rep.hold("Base URL", "the service answers the envelope at "+d.scrub(d.cfg.baseURL))
	}
}

// probeUnknownCursor lists after an id no event has: 400 unknown_cursor.
func (d *doctor) probeUnknownCursor(ctx context.Context) {
	o := d.send(ctx, http.MethodGet, "/webhooks/events?limit=1&after="+newUUID(), nil, true)
	if o.err != nil || o.status < 400 {
		if o.err == nil {
			d.rep.differ("List events", fmt.Sprintf("after=<an id no event has> answered HTTP %d, not 400 unknown_cursor: the service ignores after, or pages another way", o.status))
		}
		return
	}
	if !d.check(o, "Error body", "Error body", "Error codes") {
		return
	}
	if code, _ := o.obj["code"].(string); o.status != http.StatusBadRequest || code != "unknown_cursor" {
		d.rep.differ("List events", d.scrub(fmt.Sprintf("after=<an id no event has>: HTTP %d code %q, not 400 unknown_cursor", o.status, code)))
	}
}
