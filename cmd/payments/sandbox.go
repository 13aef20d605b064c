package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const sandboxUsage = `Usage: payments sandbox COMMAND [ARGS]

The sandbox's own controls (cmd/payments-sandbox, through its admin API), the
same as the dashboard's buttons (payments open prints its address):

  pause                                   stop delivering webhooks (events queue up)
  resume                                  deliver again, the queued events first
  webhook-url URL|none                    send webhooks to URL from now on (none: off)
  retries WAITS|none                      the retry schedule: waits such as 1s,2s,4s,8s
  advance DURATION                        move the sandbox's clock forward (5m1s)
  trigger EVENT-TYPE RESOURCE_ID          an event carrying a stored recipient, payment or
                                          virtual account (a currency for account.*)
  settle PAYMENT_ID completed|failed|rejected
                                          end a payment pending after its confirm

payments events resend EVENT_ID [--to URL] delivers an event again. The real
service has none of these: against it they fail with its 404.
`

// sandboxCommand is one "payments sandbox" command: its arguments' count
// and what it sends.
type sandboxCommand struct {
	args int
	call func(args []string) (method, path string, body any, err error)
	done func(args []string, data json.RawMessage) string
}

var sandboxCommands = map[string]sandboxCommand{
	"pause": {0, func([]string) (string, string, any, error) {
		return http.MethodPost, "/_sandbox/deliveries/pause", nil, nil
	}, func([]string, json.RawMessage) string {
		return "Deliveries paused: events queue up until payments sandbox resume"
	}},
	"resume": {0, func([]string) (string, string, any, error) {
		return http.MethodPost, "/_sandbox/deliveries/resume", nil, nil
	}, func([]string, json.RawMessage) string { return "Deliveries resumed" }},
	"webhook-url": {1, func(a []string) (string, string, any, error) {
		u := a[0]
		if strings.EqualFold(u, "none") {
			u = ""
		} else if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return "", "", nil, usagef("webhook-url %q: give an http or https URL, such as http://localhost:8080/webhooks, or none", a[0])
		}
		return http.MethodPut, "/_sandbox/webhook-url", map[string]string{"url": u}, nil
	}, func(a []string, _ json.RawMessage) string {
		if strings.EqualFold(a[0], "none") {
			return "Webhook deliveries turned off"
		}
		return "Webhooks now go to " + show(a[0])
	}},
	"retries": {1, func(a []string) (string, string, any, error) {
		waits := []string{}
		if v := strings.TrimSpace(a[0]); !strings.EqualFold(v, "none") {
			for _, part := range strings.Split(v, ",") {
				if _, err := time.ParseDuration(strings.TrimSpace(part)); err != nil {
					return "", "", nil, usagef("retries %q: give waits such as 1s,2s,4s,8s, or none", a[0])
				}
				waits = append(waits, strings.TrimSpace(part))
			}
		}
		return http.MethodPut, "/_sandbox/webhook-retries", map[string][]string{"waits": waits}, nil
	}, func(_ []string, data json.RawMessage) string {
		var r struct {
			Waits []string `json:"waits"`
		}
		_ = json.Unmarshal(data, &r)
		return fmt.Sprintf("Retry schedule set: %d retries (%s)", len(r.Waits), strings.Join(r.Waits, ", "))
	}},
	"advance": {1, func(a []string) (string, string, any, error) {
		d, err := time.ParseDuration(a[0])
		if err != nil || d <= 0 {
			return "", "", nil, usagef("advance %q: give a positive duration such as 5m1s (the clock only moves forward here)", a[0])
		}
		return http.MethodPost, "/_sandbox/clock/advance", map[string]string{"duration": a[0]}, nil
	}, func(_ []string, data json.RawMessage) string {
		var r struct {
			Now string `json:"now"`
		}
		_ = json.Unmarshal(data, &r)
		return "The sandbox's clock is now " + show(r.Now)
	}},
	"trigger": {2, func(a []string) (string, string, any, error) {
		return http.MethodPost, "/_sandbox/events/trigger", map[string]string{"event": a[0], "resource_id": a[1]}, nil
	}, func(a []string, data json.RawMessage) string {
		var r struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(data, &r)
		return fmt.Sprintf("Event %s %s produced for %s", show(a[0]), show(r.ID), show(a[1]))
	}},
	"settle": {2, func(a []string) (string, string, any, error) {
		switch a[1] {
		case "completed", "failed", "rejected":
		default:
			return "", "", nil, usagef("settle %s %q: give completed, failed or rejected", a[0], a[1])
		}
		return http.MethodPost, "/_sandbox/payments/" + url.PathEscape(a[0]) + "/settle", map[string]string{"status": a[1]}, nil
	}, func(a []string, _ json.RawMessage) string {
		return fmt.Sprintf("Payment %s is now %s", show(a[0]), a[1])
	}},
}

// sandbox is "payments sandbox COMMAND [ARGS]".
func (c *cli) sandbox(ctx context.Context, args []string) error {
	name := firstArg(args)
	if name == "" || name == "-h" || name == "-help" || name == "--help" || name == "help" {
		if name == "" {
			return usagef("sandbox needs a command: pause, resume, webhook-url, retries, advance, trigger, settle (see payments sandbox --help)")
		}
		fmt.Fprint(c.stdout, sandboxUsage)
		return nil
	}
	cmd, ok := sandboxCommands[name]
	if !ok {
		return usagef("unknown sandbox command %q (see payments sandbox --help)", name)
	}
	fs := c.newFlagSet("sandbox "+name, sandboxUsage)
	pos, err := fs.parse(args[1:])
	if err != nil {
		return err
	}
	if len(pos) != cmd.args {
		return usagef("sandbox %s takes %d argument(s), got %d (see payments sandbox --help)", name, cmd.args, len(pos))
	}
	method, path, body, err := cmd.call(pos)
	if err != nil {
		return err
	}
	raw := []byte("{}")
	if body != nil {
		raw, _ = json.Marshal(body) // strings only: cannot fail
	}
	var data json.RawMessage
	stan, err := c.admin(ctx, method, path, raw, &data)
	if err != nil {
		return fmt.Errorf("sandbox %s: %w", name, err)
	}
	fmt.Fprintf(c.stdout, "%s (stan %s)\n", cmd.done(pos, data), orNone(stan))
	return nil
}
