package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// The signing schemes of --scheme.
const (
	schemePayments = "payments"
	schemeStandard = "standard"
)

const (
	defaultInterval = 2 * time.Second
	defaultRetries  = "1s,2s,4s,8s"
	// recentIDs is how many forwarded event ids listen remembers, to skip
	// them when it has to list again from a time.
	recentIDs = 10000
)

const listenUsage = `Usage: payments listen --forward-to URL [flags]

Forwards the service's webhook events to a receiver on this machine, as the
service would deliver them: it polls the list-events operation
(Webhooks.ListEvents, after the last event it saw) and POSTs each new event's
body to URL, signed with a secret it prints at start:

  export PAYMENTS_WEBHOOK_SECRET=pssec_...

Give that to your receiver (examples/webhook-receiver reads it), or reuse a
secret with PAYMENTS_WEBHOOK_SECRET or --secret (comma-separated secrets all
sign). It starts from the service's current time, or from --since.

A plain http URL must name this machine (localhost, 127.0.0.1, ::1): to
forward in clear text to another host, pass --insecure-plain-http.

Each attempt prints a line: time, event type, event id, and the receiver's
answer, such as
  2025-01-31 09:00:02  payment.completed  0b6c...  --> POST http://localhost:8080/webhooks [200] 12ms
A first attempt is made for each event in order. One that fails (not 2xx,
or no answer) is retried after each wait of --retries, in the background,
while later events go on; after the last it is given up, with a line that
says how to replay it (--since). Ctrl-C stops; events still waiting for a
retry are named, with how to replay them.
`

// listenConfig is what listen's flags and environment say.
type listenConfig struct {
	target   string
	since    sinceValue
	interval time.Duration
	scheme   string
	secrets  []string
	made     bool   // the secret was made here, and is printed
	from     string // where the secret came from, when not made
	types    []payments.EventType
	waits    []time.Duration
	// plainHTTP allows a plain http --forward-to whose host is not loopback.
	plainHTTP bool
}

// listen is "payments listen".
func (c *cli) listen(ctx context.Context, args []string) error {
	cfg, err := c.listenConfig(args)
	if err != nil {
		return err
	}
	sign, err := newSigner(cfg.scheme, cfg.secrets, cfg.from)
	if err != nil {
		return err
	}
	client, err := c.client()
	if err != nil {
		return err
	}
	defer client.Close()

	// One page first: it checks the key and the URL, and its Date header
	// is the service's clock, from which "now" and --since 1h count.
	probe, err := client.Webhooks.ListEventsPage(ctx, &payments.EventListParams{Limit: 1, Types: cfg.types})
	if err != nil {
		return err
	}
	now, err := http.ParseTime(probe.LastResponse().Header.Get("Date"))
	if err != nil {
		now = time.Now()
	}
	start := now
	if cfg.since.set {
		start = cfg.since.resolve(now)
	}
	c.listenBanner(cfg, start)

	out := &lines{w: c.stdout, now: time.Now}
	fwd := newForwarder(cfg.target, sign, cfg.waits, out)
	p := &poller{client: client, fwd: fwd, out: out, types: cfg.types, since: start, seen: newIDSet(recentIDs)}
	rd := c.followRedeliveries(ctx, fwd, out, cfg.types) // listen_redeliveries.go
	for {
		p.poll(ctx)
		rd.poll(ctx)
		t := time.NewTimer(cfg.interval)
		select {
		case <-ctx.Done():
			t.Stop()
			if left := fwd.stop(); len(left) > 0 {
				out.printf("stopped; %d event(s) not delivered: %s%s", len(left), eventIDs(left), replayHint(left))
			} else {
				out.printf("stopped")
			}
			return nil
		case <-t.C:
		}
	}
}

// listenConfig reads listen's flags and environment.
func (c *cli) listenConfig(args []string) (*listenConfig, error) {
	fs := c.newFlagSet("listen", listenUsage)
	cfg := &listenConfig{}
	var types typesValue
	fs.StringVar(&cfg.target, "forward-to", "", "the receiver's `URL`, such as http://localhost:8080/webhooks (required)")
	fs.Var(&cfg.since, "since", "forward the events created from this `time` on: RFC 3339, or a duration before the service's now (1h) (default: now)")
	fs.DurationVar(&cfg.interval, "interval", defaultInterval, "how often to ask the service for new events")
	scheme := fs.String("scheme", "", "how to sign: payments (the Payments-Signature header) or standard (Standard Webhooks, webhook-id = the event id) (default: $"+envWebhookScheme+", else payments)")
	secret := fs.String("secret", "", "sign with this `secret`; it stays in your shell history, which "+envWebhookSecret+" does not (default: $"+envWebhookSecret+", else a new one, printed)")
	fs.Var(&types, "events", "forward only events of these `types`, comma-separated (default: all)")
	retries := fs.String("retries", defaultRetries, "the `waits` before each retry of a failed delivery, comma-separated, or none")
	fs.BoolVar(&cfg.plainHTTP, "insecure-plain-http", false, "allow a plain http --forward-to whose host is not loopback: the events cross the network in clear text (a private network you trust only)")
	pos, err := fs.parse(args)
	if err != nil {
		return nil, err
	}
	cfg.types = types
	if len(pos) > 0 {
		return nil, usagef("listen takes no arguments (got %q; see payments listen --help)", pos[0])
	}
	if err := checkTarget(cfg.target, cfg.plainHTTP); err != nil {
		return nil, err
	}
	if cfg.interval <= 0 {
		return nil, usagef("--interval %s: give a positive duration such as 2s", cfg.interval)
	}
	if cfg.waits, err = parseWaits(*retries); err != nil {
		return nil, err
	}
	cfg.scheme = strings.ToLower(strings.TrimSpace(*scheme))
	if cfg.scheme == "" {
		cfg.scheme = strings.ToLower(strings.TrimSpace(c.getenv(envWebhookScheme)))
	}
	if cfg.scheme == "" {
		cfg.scheme = schemePayments
	}
	if cfg.scheme != schemePayments && cfg.scheme != schemeStandard {
		return nil, usagef("--scheme %q: give payments (the Payments-Signature header) or standard (Standard Webhooks)", cfg.scheme)
	}
	switch {
	case *secret != "":
		cfg.secrets, cfg.from = splitSecrets(*secret), "--secret"
	case c.getenv(envWebhookSecret) != "":
		cfg.secrets, cfg.from = splitSecrets(c.getenv(envWebhookSecret)), envWebhookSecret
	default:
		s, err := newSecret(cfg.scheme)
		if err != nil {
			return nil, err
		}
		cfg.secrets, cfg.made = []string{s}, true
	}
	if len(cfg.secrets) == 0 {
		return nil, usagef("%s holds no secret", cfg.from)
	}
	return cfg, nil
}

// checkTarget checks --forward-to: an absolute http or https URL, and plain
// http only to a loopback host (localhost, 127.0.0.0/8, ::1) unless
// plainHTTP (--insecure-plain-http): the events carry payment data, and
// would cross the network in clear text, as the SDK refuses for its own
// base URL without WithInsecurePlainHTTP.
func checkTarget(target string, plainHTTP bool) error {
	if target == "" {
		return usagef("listen needs --forward-to URL, such as http://localhost:8080/webhooks")
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--forward-to %q: give an http or https URL, such as http://localhost:8080/webhooks", target)
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) && !plainHTTP {
		return usagef("--forward-to %s is plain http to a host that is not loopback: the events would cross the network in clear text. "+
			"Use https, or pass --insecure-plain-http (a private network you trust only)", u.Redacted())
	}
	return nil
}

// parseWaits reads --retries: comma-separated durations, or none.
func parseWaits(v string) ([]time.Duration, error) {
	if v = strings.TrimSpace(v); strings.EqualFold(v, "none") {
		return nil, nil
	}
	var waits []time.Duration
	for _, part := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return nil, usagef("--retries %q: give waits such as %s, or none", v, defaultRetries)
		}
		waits = append(waits, d)
	}
	return waits, nil
}

// splitSecrets splits comma-separated secrets, dropping blanks.
func splitSecrets(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// newSecret makes a secret in the scheme's form: pssec_ and hex for the
// Payments-Signature scheme (as cmd/payments-sandbox makes them), whsec_
// and base64 for Standard Webhooks. The prefixes differ so that a secret
// tells which scheme it belongs to; a Payments-Signature secret given
// with --secret may have any prefix (whsec_ ones made before included).
func newSecret(scheme string) (string, error) {
	if scheme == schemeStandard {
		return webhook.NewStandardSecret()
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "pssec_" + hex.EncodeToString(b), nil
}

// listenBanner prints where events come from and go, and the secret when
// it was made here: the one secret this command ever prints.
func (c *cli) listenBanner(cfg *listenConfig, start time.Time) {
	w := c.stdout
	fmt.Fprintf(w, "Forwarding the events of %s to %s\n", c.getenv(envBaseURL), cfg.target)
	scheme := "the Payments-Signature header"
	if cfg.scheme == schemeStandard {
		scheme = "Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)"
	}
	if cfg.made {
		fmt.Fprintf(w, "Signed with %s and a new secret; give your receiver:\n\n", scheme)
		fmt.Fprintf(w, "export %s=%s\n", envWebhookSecret, cfg.secrets[0])
		if cfg.scheme == schemeStandard {
			fmt.Fprintf(w, "export %s=%s\n", envWebhookScheme, schemeStandard)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "Signed with %s and the secret of %s\n", scheme, cfg.from)
	}
	if len(cfg.types) > 0 {
		fmt.Fprintf(w, "Only events of type %s\n", (*typesValue)(&cfg.types))
	}
	fmt.Fprintf(w, "Ready: forwarding events created from %s (the service's clock), polling every %s. Ctrl-C stops.\n",
		start.UTC().Format(time.RFC3339), cfg.interval)
}

// poller lists the events after the last one seen and forwards them.
type poller struct {
	client  *payments.Client
	fwd     *forwarder
	out     *lines
	types   []payments.EventType
	since   time.Time // where to list from while cursor is ""
	cursor  string    // the id of the last event forwarded
	lastAt  time.Time // its creation time
	seen    *idSet
	failing bool
}

// poll lists and forwards the new events, and returns when the list is
// exhausted or fails (payments.ErrEventCursorCycle included: a service whose
// cursors cycle ends each poll). A failure is printed once, and so is the
// recovery: a list that runs to its end.
func (p *poller) poll(ctx context.Context) {
	params := &payments.EventListParams{Types: p.types, Limit: payments.EventListMaxLimit}
	if p.cursor != "" {
		params.After = p.cursor
	} else {
		params.Since = p.since
	}
	for ev, err := range p.client.Webhooks.ListEvents(ctx, params) {
		if ctx.Err() != nil {
			return
		}
		if err != nil && !errors.Is(err, payments.CodeUnknownEventCursor) {
			if !p.failing {
				p.out.printf("listing events failed, trying again every poll: %v", err)
			}
			p.failing = true
			return
		}
		if err != nil {
			p.answered()
			// The service forgot the last event (a sandbox restarted, or
			// a log that rolled over): list again from its time, and skip
			// what was forwarded already.
			p.out.printf("the service no longer knows event %s; listing again from %s", show(p.cursor), p.lastAt.UTC().Format(time.RFC3339))
			p.cursor, p.since = "", p.lastAt
			return
		}
		if p.seen.add(ev.ID) {
			p.fwd.forward(ctx, ev)
		}
		p.cursor, p.lastAt = ev.ID, ev.CreatedAt
	}
	if ctx.Err() == nil {
		p.answered()
	}
}

// answered notes that the service answered a list request, and says so
// once after failures.
func (p *poller) answered() {
	if p.failing {
		p.out.printf("listing events works again")
		p.failing = false
	}
}

// idSet remembers the last n ids added.
type idSet struct {
	ids  map[string]bool
	ring []string
	next int
}

func newIDSet(n int) *idSet { return &idSet{ids: map[string]bool{}, ring: make([]string, n)} }

// add adds id and reports whether it was new.
func (s *idSet) add(id string) bool {
	if s.ids[id] {
		return false
	}
	delete(s.ids, s.ring[s.next])
	s.ring[s.next], s.ids[id] = id, true
	s.next = (s.next + 1) % len(s.ring)
	return true
}
