package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const doctorUsage = `Usage: payments doctor [--json] [--production] [--receive ADDR] [--wait 10s]

Checks the SDK's assumptions about the service (docs/assumptions.md) against
the environment of PAYMENTS_BASE_URL and PAYMENTS_API_KEY, without moving
money: it creates a recipient and replays it, initiates a payment and
replays it (never confirms), sends a deliberately invalid body, a request
without the key and a list of events with an unknown cursor, and triggers a
test event of each type, catching the deliveries to check their body,
headers and signature (PAYMENTS_WEBHOOK_SECRET verifies them).

It prints one row per assumption: holds, differs (what it saw, secrets and
personal data masked, and the override to use), or could not check (why).
Exit status: 0 when every assumption it could check holds, 1 when one
differs, 2 on a usage error or a refused production environment.

Deliveries: against the sandbox (its admin API answers), doctor points the
sandbox's webhook URL at a receiver of its own for the run and puts it back
after. Elsewhere, give --receive ADDR and send the service's deliveries
there (the dashboard's webhook URL, or a tunnel to it).

Production: a base URL whose host is not loopback and has no label with
"sandbox", "test" or "staging" in it, or a key that says live or production
(a live_/sk_live_ prefix, or a JWT whose env, environment or mode claim is
live or production, or livemode true), is production. doctor refuses it
unless --production is given, and then runs only the probes that create
nothing (GET requests and a request without the key).
`

// doctorConfig is what doctor's flags and environment say.
type doctorConfig struct {
	key, baseURL string
	json         bool
	production   bool // --production: allowed, and only probes that create nothing
	receive      string
	wait         time.Duration
	currency     string
	secrets      []string // PAYMENTS_WEBHOOK_SECRET, to verify deliveries
	scheme       string
}

// doctor is "payments doctor".
func (c *cli) doctor(ctx context.Context, args []string) error {
	fs := c.newFlagSet("doctor", doctorUsage)
	cfg := &doctorConfig{}
	fs.BoolVar(&cfg.json, "json", false, "print the rows as one JSON document (its schema is in docs/when-the-service-differs.md)")
	fs.BoolVar(&cfg.production, "production", false, "allow a production key or URL, and run only the probes that create nothing")
	fs.StringVar(&cfg.receive, "receive", "", "receive the service's deliveries on this `address` (host:port), where its webhook URL sends them")
	fs.DurationVar(&cfg.wait, "wait", 10*time.Second, "how long to wait for the deliveries of the triggered events")
	fs.StringVar(&cfg.currency, "currency", "NGN", "the `currency` of the probe recipient and payment")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("doctor takes no arguments (got %q; see payments doctor --help)", pos[0])
	}
	if cfg.wait <= 0 {
		return usagef("--wait %s: give a positive duration such as 10s", cfg.wait)
	}
	client, err := c.client() // checks the key, the URL and its scheme as the SDK does
	if err != nil {
		return err
	}
	client.Close()
	cfg.key, cfg.baseURL = c.getenv(envAPIKey), strings.TrimRight(c.getenv(envBaseURL), "/")
	cfg.secrets, cfg.scheme = splitSecrets(c.getenv(envWebhookSecret)), strings.ToLower(c.getenv(envWebhookScheme))
	if why := productionSign(cfg.key, cfg.baseURL); why != "" && !cfg.production {
		return usagef("doctor refuses a production environment (%s): it creates a recipient and a payment. "+
			"Point it at a sandbox, or pass --production to run only the probes that create nothing", why)
	} else if why == "" {
		cfg.production = false
	}
	d := newDoctor(cfg)
	d.run(ctx)
	if cfg.json {
		d.printJSON(c.stdout)
	} else {
		d.printText(c.stdout)
	}
	if !d.rep.allHold() {
		return &differsError{n: d.rep.count(differs)}
	}
	return nil
}

// differsError is doctor's exit 1: an assumption differs.
type differsError struct{ n int }

func (e *differsError) Error() string {
	return fmt.Sprintf("doctor: %d assumption(s) differ from what the service answered: see the rows above and docs/when-the-service-differs.md", e.n)
}

// productionSign says why key or baseURL look like production, or "" when
// they look like a sandbox (see doctorUsage).
func productionSign(key, baseURL string) string {
	lower := strings.ToLower(key)
	for _, p := range []string{"live_", "sk_live_", "pk_live_", "prod_"} {
		if strings.HasPrefix(lower, p) {
			return "the API key starts with " + p
		}
	}
	if claims := jwtClaims(key); claims != nil {
		for _, name := range []string{"env", "environment", "mode"} {
			if v, _ := claims[name].(string); v == "live" || v == "production" || v == "prod" {
				return fmt.Sprintf("the API key's %s claim is %s", name, v)
			}
		}
		if live, _ := claims["livemode"].(bool); live {
			return "the API key's livemode claim is true"
		}
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return "the base URL cannot be read"
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
		return ""
	}
	for _, label := range strings.Split(strings.ToLower(host), ".") {
		for _, w := range []string{"sandbox", "test", "staging"} {
			if strings.Contains(label, w) {
				return ""
			}
		}
	}
	return fmt.Sprintf("the host %s is not loopback and no label of it says sandbox, test or staging", host)
}

// jwtClaims reads the claims of a JWT-shaped key, unverified (only to
// recognise production); nil when key is not one.
func jwtClaims(key string) map[string]any {
	parts := strings.Split(key, ".")
	if len(parts) != 3 {
		return nil
	}
	raw, err := decodeSegment(parts[1])
	if err != nil {
		return nil
	}
	var claims map[string]any
	if json.Unmarshal(raw, &claims) != nil {
		return nil
	}
	return claims
}

// doctor runs the probes and keeps the report.
type doctor struct {
	cfg      *doctorConfig
	http     *http.Client
	contract contract
	rep      *report
	obs      []*observation // every answer, for the headers' rows
	start    time.Time      // the service's clock when doctor began
}

func newDoctor(cfg *doctorConfig) *doctor {
	return &doctor{
		cfg: cfg,
		http: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		contract: newDocumentContract(),
		rep:      newReport(),
	}
}

// run runs every probe the configuration allows, in an order where each
// one's findings can feed the next.
func (d *doctor) run(ctx context.Context) {
	d.probeWithoutKey(ctx)
	d.probeListEvents(ctx)
	d.probeUnknownCursor(ctx)
	if d.cfg.production {
		for _, t := range topics {
			if t.creates {
				d.rep.cannot(t.name, "--production: this probe creates something, and runs against a sandbox only")
			}
		}
	} else {
		id := d.probeRecipient(ctx)
		d.probeInitiate(ctx, id)
		d.probeInvalidInitiate(ctx)
		d.probeConfirm(ctx)
		d.probeWebhooks(ctx) // doctor_webhooks.go
	}
	d.probeHeaders()
	d.rep.finish()
}
