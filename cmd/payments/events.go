package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

const eventsUsage = `Usage: payments events list|resend [flags]

Commands:
  list     list the service's events, oldest first
  resend   deliver an event again (the sandbox's admin API)

Run "payments events list --help" or "payments events resend --help" for their flags.
`

var eventsResendUsage = `Usage: payments events resend EVENT_ID [--to URL]

Asks the sandbox (cmd/payments-sandbox, or paymentstest with its admin API) to
deliver the event again: to its webhook URL, or to --to (the webhook URL stays
as it is). The body is the same, so the event id is the same: a receiver that
processed it already drops it as a duplicate. The dashboard's Redeliver button
does the same. The real service has no such operation: against it, this fails
with the service's 404.
`

var eventsListUsage = `Usage: payments events list [--since TIME|DURATION] [--after ID] [--type TYPE]... [--limit N] [--json]

Lists the service's events, oldest first (Webhooks.ListEvents), one a line:
its creation time (RFC 3339, UTC, which --since takes back), type and id.
With --json, each event's body exactly as the service gave it, one a line.
--limit N prints the N newest (like tail), and a note on stderr says how
many older ones it left out. With --after ID it pages forward instead: the
N events after ID, and a note on stderr says how to go on (--after the last
id printed).

Event types of the specification (for --type):
` + eventTypeList()

// defaultEventsLimit is how many events "events list" prints unless --limit
// says otherwise.
const defaultEventsLimit = 100

// events is "payments events SUBCOMMAND".
func (c *cli) events(ctx context.Context, args []string) error {
	switch sub := firstArg(args); sub {
	case "list":
		return c.eventsList(ctx, args[1:])
	case "resend":
		return c.eventsResend(ctx, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stdout, eventsUsage)
		return nil
	case "":
		return usagef("events needs a subcommand: payments events list|resend (see payments events --help)")
	default:
		return usagef("unknown events subcommand %q: payments events list|resend (see payments events --help)", sub)
	}
}

// eventsList is "payments events list".
func (c *cli) eventsList(ctx context.Context, args []string) error {
	fs := c.newFlagSet("events list", eventsListUsage)
	var since sinceValue
	var types typesValue
	fs.Var(&since, "since", "list events created at or after this `time`: RFC 3339, or a duration before now on this machine's clock (1h)")
	after := fs.String("after", "", "list the events created after the event with this `id`")
	fs.Var(&types, "type", "list only events of this `type`; repeat it, or separate types with commas")
	limit := fs.Int("limit", defaultEventsLimit, "print at most `N` events; 0 prints them all")
	asJSON := fs.Bool("json", false, "print each event's JSON body, one a line")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("events list takes no arguments (got %q; see payments events list --help)", pos[0])
	case *limit < 0:
		return usagef("--limit %d: give 0 (all) or more", *limit)
	}
	client, err := c.client()
	if err != nil {
		return err
	}
	defer client.Close()
	// Paging forward (--after) asks for pages of --limit and stops after it;
	// otherwise every page is read and the newest --limit are kept.
	tail := *after == "" && *limit > 0
	pageSize := min(*limit, payments.EventListMaxLimit)
	if tail || *limit == 0 {
		pageSize = payments.EventListMaxLimit
	}
	params := &payments.EventListParams{After: *after, Types: types, Limit: pageSize}
	if since.set {
		params.Since = since.resolve(time.Now())
	}
	var kept []*payments.Event // tail: the newest --limit, oldest first
	skipped, printed, last := 0, 0, ""
	for ev, err := range client.Webhooks.ListEvents(ctx, params) {
		if err != nil {
			return err
		}
		if tail {
			if len(kept) == *limit {
				kept = kept[1:] // append copies what is left when it grows
				skipped++
			}
			kept = append(kept, ev)
			continue
		}
		if *limit > 0 && printed == *limit {
			fmt.Fprintf(c.stderr, "More events follow: payments events list --after %s\n", show(last))
			break
		}
		if err := c.printEvent(ev, *asJSON); err != nil {
			return err
		}
		printed, last = printed+1, ev.ID
	}
	for _, ev := range kept {
		if err := c.printEvent(ev, *asJSON); err != nil {
			return err
		}
	}
	if skipped > 0 {
		noun := "events"
		if skipped == 1 {
			noun = "event"
		}
		fmt.Fprintf(c.stderr, "%d older %s not shown (--limit %d prints the newest): --limit 0 prints them all, --since narrows the window\n",
			skipped, noun, *limit)
	}
	return nil
}

// printEvent prints one event of "events list": its line, or its compact
// JSON body with --json.
func (c *cli) printEvent(ev *payments.Event, asJSON bool) error {
	if asJSON {
		var line bytes.Buffer
		if json.Compact(&line, ev.RawJSON()) != nil { // cannot happen: ParseEvent took it
			return fmt.Errorf("event %s: the service's JSON does not compact", show(ev.ID))
		}
		fmt.Fprintf(c.stdout, "%s\n", line.Bytes())
		return nil
	}
	fmt.Fprintf(c.stdout, "%s  %-32s  %s\n", eventTime(ev), show(string(ev.Type)), show(ev.ID))
	return nil
}

// eventTime is the event's creation time in RFC 3339 (UTC), or "-" when
// the service gave none.
func eventTime(ev *payments.Event) string {
	if ev.CreatedAt.IsZero() {
		return "-"
	}
	return ev.CreatedAt.UTC().Format(time.RFC3339)
}

// eventsResend is "payments events resend EVENT_ID [--to URL]": POST
// /_sandbox/events/{id}/redeliver of the sandbox's admin API.
func (c *cli) eventsResend(ctx context.Context, args []string) error {
	fs := c.newFlagSet("events resend", eventsResendUsage)
	to := fs.String("to", "", "deliver to this `URL` instead of the sandbox's webhook URL")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		return usagef("events resend takes one event id (got %d arguments; see payments events resend --help)", len(pos))
	}
	if u, err := url.Parse(*to); *to != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return usagef("--to %q: give an http or https URL, such as http://localhost:8080/webhooks", *to)
	}
	body := []byte("{}")
	if *to != "" {
		body, _ = json.Marshal(map[string]string{"url": *to}) // a string: cannot fail
	}
	var queued struct {
		URL string `json:"url"`
	}
	stan, err := c.admin(ctx, http.MethodPost, "/_sandbox/events/"+url.PathEscape(pos[0])+"/redeliver", body, &queued)
	if err != nil {
		return fmt.Errorf("events resend %s: %w", show(pos[0]), err)
	}
	fmt.Fprintf(c.stdout, "Event %s queued for delivery again to %s (stan %s)\n", show(pos[0]), show(queued.URL), orNone(stan))
	return nil
}
