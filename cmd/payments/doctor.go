package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const doctorUsage = `Usage: payments doctor [--sandbox-host HOST | --production] [--json] [--timeout 2m]
                       [--receive ADDR] [--wait 10s] [--currency NGN]

Checks the SDK's assumptions about the service (docs/assumptions.md) against
the environment of PAYMENTS_BASE_URL and PAYMENTS_API_KEY. Against a sandbox
it creates a recipient and replays it, initiates a payment and replays it,
confirms that one payment and follows it to its final status, sends a
deliberately invalid body, a request without the key and a list of events
with an unknown cursor, triggers a test event of each type, catching the
deliveries to check their body, headers and signature (PAYMENTS_WEBHOOK_SECRET
verifies them), and sends a short burst of GET requests to see what a 429
carries.

Writes (POST, PUT, DELETE: creates, the confirm, triggers, the sandbox's
admin API) go only to a sandbox you name: a loopback base URL (our
payments-sandbox), or the host you give with --sandbox-host, which must be
PAYMENTS_BASE_URL's host. doctor never takes a host for a sandbox from its
name or from the key. Any other base URL is refused (exit 2, nothing sent)
unless --production is given, which sends GET requests only, to any host.
A key that looks live (live_, sk_live_, pk_live_ or prod_, or a JWT whose
env, environment or mode claim is live, production or prod, or livemode
true) is never sent a write: doctor refuses it unless --production.

Deliveries: against our sandbox (its admin API answers), doctor points the
sandbox's webhook URL at a receiver of its own before it creates anything,
and puts it back at the end, also after a failure, --timeout or Ctrl-C.
Against your provider's sandbox, give --receive ADDR and point the
dashboard's webhook URL (or a tunnel) at it first; without either, doctor
creates nothing, so that its events never reach your own receiver.

It prints one row per assumption as soon as it is decided: holds, differs
(what it saw, secrets and personal data masked, and the override to use), or
could not check (why; every probe that got no answer). Once the base URL
gives no answer, or --timeout runs out, doctor stops probing.
Exit status: 0 when every assumption it could check holds, 1 when one
differs or doctor stopped early, 2 on a usage error or a refused target.
`

// doctorConfig is what doctor's flags and environment say.
type doctorConfig struct {
	key, baseURL string
	json         bool
	production   bool // --production: GET requests only, to any host
	// writes: the base URL is a sandbox the merchant named (loopback, or
	// --sandbox-host), so the probes that create something run.
	writes      bool
	why         string // how the target was named: "loopback", "--sandbox-host HOST", "--production"
	sandboxHost string
	receive     string
	wait        time.Duration
	timeout     time.Duration
	currency    string
	secrets     []string // PAYMENTS_WEBHOOK_SECRET, to verify deliveries
	scheme      string
}

// doctor is "payments doctor".
func (c *cli) doctor(ctx context.Context, args []string) error {
	fs := c.newFlagSet("doctor", doctorUsage)
	cfg := &doctorConfig{}
	fs.BoolVar(&cfg.json, "json", false, "print the rows as one JSON document at the end (its schema is in docs/when-the-service-differs.md)")
	fs.BoolVar(&cfg.production, "production", false, "send GET requests only (no create, confirm, trigger or admin call), to any host")
	fs.StringVar(&cfg.sandboxHost, "sandbox-host", "", "the `host` of PAYMENTS_BASE_URL, named as a sandbox: doctor may create and confirm a payment there")
	fs.StringVar(&cfg.receive, "receive", "", "receive the service's deliveries on this `address` (host:port), where its webhook URL sends them")
	fs.DurationVar(&cfg.wait, "wait", 10*time.Second, "how long to wait for the deliveries of the triggered events and the confirmed payment's final status")
	fs.DurationVar(&cfg.timeout, "timeout", 2*time.Minute, "the bound on the whole run; the rows not decided by then could not be checked")
	fs.StringVar(&cfg.currency, "currency", "NGN", "the `currency` of the probe recipient and payment")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("doctor takes no arguments (got %q; see payments doctor --help)", pos[0])
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := checkDoctorFlags(cfg, set); err != nil {
		return err
	}
	client, err := c.client() // checks the key, the URL and its scheme as the SDK does
	if err != nil {
		return err
	}
	client.Close()
	cfg.key, cfg.baseURL = c.getenv(envAPIKey), strings.TrimRight(c.getenv(envBaseURL), "/")
	cfg.secrets, cfg.scheme = splitSecrets(c.getenv(envWebhookSecret)), strings.ToLower(c.getenv(envWebhookScheme))
	if err := cfg.decideWrites(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	d := newDoctor(cfg, c.transport)
	if !cfg.json {
		d.rep.out = c.stdout
		d.printHeader(c.stdout)
	}
	d.run(ctx)
	if cfg.json {
		d.printJSON(c.stdout)
	} else {
		d.printSummary(c.stdout)
	}
	for _, w := range d.warnings {
		fmt.Fprintln(c.stderr, "payments: doctor: "+w)
	}
	switch {
	case !d.rep.allHold():
		return &differsError{n: d.rep.count(differs)}
	case d.stopped != "":
		return &stoppedError{why: d.stopped}
	}
	return nil
}

// checkDoctorFlags refuses flags that contradict each other, or that the
// others would leave unused: a flag is never dropped silently.
func checkDoctorFlags(cfg *doctorConfig, set map[string]bool) error {
	switch {
	case cfg.wait <= 0:
		return usagef("--wait %s: give a positive duration such as 10s", cfg.wait)
	case cfg.timeout <= 0:
		return usagef("--timeout %s: give a positive duration such as 2m", cfg.timeout)
	case cfg.wait >= cfg.timeout && !set["wait"]:
		cfg.wait = cfg.timeout / 2 // the default wait, within a short --timeout
	case cfg.wait >= cfg.timeout:
		return usagef("--wait %s is not shorter than --timeout %s: doctor would stop before the wait ends; raise --timeout or shorten --wait", cfg.wait, cfg.timeout)
	case set["sandbox-host"] && strings.TrimSpace(cfg.sandboxHost) == "":
		return usagef("--sandbox-host is empty: give the host of PAYMENTS_BASE_URL, such as sandbox.provider.example")
	case cfg.production && cfg.sandboxHost != "":
		return usagef("--production and --sandbox-host contradict each other: --production sends GET requests only, " +
			"--sandbox-host lets doctor create and confirm a payment at that host. Give --sandbox-host HOST for a sandbox, or --production alone")
	}
	if cfg.production {
		for _, name := range []string{"receive", "wait", "currency"} {
			if set[name] {
				return usagef("--%s has no use with --production, which sends GET requests only (nothing is created, triggered or delivered): drop --%s, "+
					"or check a sandbox with --sandbox-host HOST instead", name, name)
			}
		}
	}
	return nil
}

// decideWrites decides whether doctor may send writes to the base URL: only
// to a sandbox the merchant named (loopback, or --sandbox-host naming its
// host), never by the look of the host's name or of the key; a key that
// looks live is refused them. Nothing is sent before this.
func (cfg *doctorConfig) decideWrites() error {
	u, err := url.Parse(cfg.baseURL)
	if err != nil {
		return usagef("%s cannot be read as a URL: %v", envBaseURL, err)
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case cfg.production:
		cfg.why = "--production: GET requests only"
		return nil
	case cfg.sandboxHost != "":
		if !namesHost(cfg.sandboxHost, u) {
			return usagef("--sandbox-host %s does not name the host of %s (%s): doctor writes only to the host you name. "+
				"If %s is your sandbox, give --sandbox-host %s; otherwise point %s at the sandbox. Nothing was sent",
				show(cfg.sandboxHost), envBaseURL, host, host, host, envBaseURL)
		}
		cfg.why = "sandbox: --sandbox-host " + host
	case loopbackHost(u.Hostname()): // loopback.go, the SDK's own rule
		cfg.why = "sandbox: loopback"
	default:
		return usagef("doctor creates a recipient and confirms a payment, and sends such writes only to a sandbox you name: %s is not loopback. "+
			"If it is your provider's sandbox, pass --sandbox-host %s; to check production with GET requests only, pass --production. Nothing was sent",
			host, host)
	}
	if why := liveKeySign(cfg.key); why != "" {
		return usagef("the API key looks like a production key (%s): doctor creates and confirms a payment, so it sends no write with it. "+
			"Use the sandbox's API key, or pass --production to send GET requests only. Nothing was sent", why)
	}
	cfg.writes = true
	return nil
}

// namesHost reports whether host (a host name or IP, with or without a
// port) names u's host.
func namesHost(host string, u *url.URL) bool {
	host = strings.TrimSpace(host)
	return strings.EqualFold(host, u.Hostname()) || strings.EqualFold(host, u.Host)
}

// differsError is doctor's exit 1: an assumption differs.
type differsError struct{ n int }

func (e *differsError) Error() string {
	return fmt.Sprintf("doctor: %d assumption(s) differ from what the service answered: see the rows above and docs/when-the-service-differs.md", e.n)
}

// stoppedError is doctor's exit 1 when it stopped probing early.
type stoppedError struct{ why string }

func (e *stoppedError) Error() string {
	return "doctor: stopped early (" + e.why + "): the rows it did not reach could not be checked; run it again when the service answers, or with a longer --timeout"
}

// liveKeySign says why key looks like a production key, or "". It only
// ever refuses writes; no key lets doctor write.
func liveKeySign(key string) string {
	lower := strings.ToLower(key)
	for _, p := range []string{"live_", "sk_live_", "pk_live_", "prod_"} {
		if strings.HasPrefix(lower, p) {
			return "it starts with " + p
		}
	}
	if claims := jwtClaims(key); claims != nil {
		for _, name := range []string{"env", "environment", "mode"} {
			if v, _ := claims[name].(string); v == "live" || v == "production" || v == "prod" {
				return fmt.Sprintf("its %s claim is %s", name, v)
			}
		}
		if live, _ := claims["livemode"].(bool); live {
			return "its livemode claim is true"
		}
	}
	return ""
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

// newHTTP is doctor's HTTP client: no redirect followed, each request
// bounded; rt nil is http.DefaultTransport.
func newHTTP(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}
