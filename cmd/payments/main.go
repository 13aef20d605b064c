// Command payments is the Payments API at a terminal: it forwards the
// service's webhook events to a receiver on your machine, sends test events,
// and lists events.
//
//	go install github.com/paymentsapi/payments-go/cmd/payments@latest
//
// Usage:
//
//	payments listen --forward-to http://localhost:8080/webhooks [--since 1h]
//	                [--scheme payments|standard] [--secret SECRET]
//	                [--events payment.completed,...] [--interval 2s]
//	                [--retries 1s,2s,4s,8s|none] [--insecure-plain-http]
//	payments trigger <event-type>
//	payments events list [--since 1h] [--after ID] [--type TYPE]... [--limit 100] [--json]
//	payments events resend EVENT_ID [--to URL]
//	payments open
//	payments sandbox pause|resume|webhook-url|retries|advance|trigger|settle ...
//	payments payments stuck [--older-than 1h] [--store URL] [--json]
//	payments doctor [--sandbox-host HOST | --production] [--json] [--timeout 2m]
//	                [--receive ADDR] [--wait 10s] [--currency NGN]
//
// The API key comes from PAYMENTS_API_KEY and nowhere else (no flag, so
// that it stays out of shell history), the base URL from PAYMENTS_BASE_URL,
// and PAYMENTS_INSECURE_PLAIN_HTTP=1 allows a plain http URL that is not
// loopback, as payments.NewClientFromEnv reads them. The export lines
// cmd/payments-sandbox prints set all three for the sandbox.
//
// listen polls the list-events operation (Webhooks.ListEvents) and POSTs each
// new event to --forward-to, signed as the service signs deliveries, with a
// secret it prints at start (or PAYMENTS_WEBHOOK_SECRET, or --secret). It
// prints a line per delivery attempt, retries a failed one on its own
// schedule while later events go on, and stops cleanly on SIGINT or
// SIGTERM. A plain http --forward-to must name this machine (localhost,
// 127.0.0.1, ::1) unless --insecure-plain-http is given: the events carry
// payment data. See listen --help.
//
// doctor checks the SDK's assumptions about the service (docs/assumptions.md)
// against the environment and prints a row per assumption as it is decided:
// holds, differs or could not check. It writes (creates, confirms one
// payment, triggers) only to a sandbox the merchant names: a loopback base
// URL, or --sandbox-host naming its host; --production sends GET requests
// only; --timeout bounds the run (see doctor --help and
// docs/when-the-service-differs.md).
//
// Every command has --help. Exit codes: 0 success, 1 the service or the
// forwarding failed (the SDK's error is printed, with the stan when the
// service answered), 2 a usage or configuration error. Errors never contain
// the API key, and the only secret printed is the one listen makes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	payments "github.com/paymentsapi/payments-go"
)

// The exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the service, or forwarding, failed
	exitUsage   = 2 // bad flags, arguments or environment
)

// The environment variables the command reads.
const (
	envAPIKey        = "PAYMENTS_API_KEY"
	envBaseURL       = "PAYMENTS_BASE_URL"
	envInsecureHTTP  = "PAYMENTS_INSECURE_PLAIN_HTTP"
	envWebhookSecret = "PAYMENTS_WEBHOOK_SECRET"
	envWebhookScheme = "PAYMENTS_WEBHOOK_SCHEME"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli is what every command gets: where to write, and the environment.
type cli struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// transport carries doctor's requests (nil: http.DefaultTransport);
	// tests route a production-looking host to a recording server with it.
	transport http.RoundTripper
}

// usageError is a mistake in the command line or the environment: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

const topUsage = `payments: the Payments API at a terminal.

Usage:
  payments listen --forward-to URL   forward the service's events to a local receiver, signed
  payments trigger EVENT-TYPE        ask the service to send a test event
  payments events list               list the service's events
  payments events resend EVENT_ID    deliver an event again (sandbox; --to URL)
  payments open                      print the sandbox dashboard's address
  payments sandbox COMMAND           the sandbox's controls: pause, resume, advance, settle, ...
  payments payments stuck            payments with no final outcome, from the tracker's store
  payments doctor                    check the SDK's assumptions against the service (sandbox)

Run "payments COMMAND --help" for a command's flags.

Environment:
  PAYMENTS_API_KEY              the API key (required; never a flag, to keep it out of shell history)
  PAYMENTS_BASE_URL             the service's base URL (required)
  PAYMENTS_INSECURE_PLAIN_HTTP  1 allows a plain http base URL that is not loopback (sandboxes only)

Exit codes: 0 success, 1 the service or a delivery failed, 2 a usage or configuration error.
`

// run runs the command line args and returns the exit code. getenv reads
// the environment (os.Getenv, or a map in tests); ctx ends on SIGINT or
// SIGTERM.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return (&cli{stdout: stdout, stderr: stderr, getenv: getenv}).run(ctx, args)
}

// run runs the command line args with c and returns the exit code.
func (c *cli) run(ctx context.Context, args []string) int {
	stdout, stderr := c.stdout, c.stderr
	var err error
	switch cmd := firstArg(args); cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, topUsage)
		return exitOK
	case "listen":
		err = c.listen(ctx, args[1:])
	case "trigger":
		err = c.trigger(ctx, args[1:])
	case "events":
		err = c.events(ctx, args[1:])
	case "open":
		err = c.open(ctx, args[1:])
	case "sandbox":
		err = c.sandbox(ctx, args[1:])
	case "payments":
		err = c.payments(ctx, args[1:])
	case "doctor":
		err = c.doctor(ctx, args[1:])
	case "":
		fmt.Fprint(stderr, topUsage)
		return exitUsage
	default:
		// Named as go names its own: "payments refund: unknown command".
		fmt.Fprintf(stderr, "payments %s: unknown command (listen, trigger, events, open, sandbox, payments, doctor; see payments --help)\n", shownArg(cmd))
		return exitUsage
	}
	return c.exitCode(err)
}

// shownArg is an argument as an error message shows it: as typed, or
// quoted when it holds a space, a quote, a backslash or a character that
// is not printable (a terminal's escape sequence among them).
func shownArg(s string) string {
	if q := strconv.Quote(s); q[1:len(q)-1] != s || strings.Contains(s, " ") {
		return q
	}
	return s
}

// exitCode prints err, if any, and returns the exit code that goes with it.
// The SDK's typed errors say what happened, with the stan when the service
// answered, and never the API key: they are printed as they are.
func (c *cli) exitCode(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "payments: ") { // the SDK's errors have it
		msg = "payments: " + msg
	}
	fmt.Fprintln(c.stderr, msg)
	var usage *usageError
	if errors.As(err, &usage) || errors.Is(err, payments.ErrInvalidParams) || errors.Is(err, payments.ErrInvalidConfig) {
		return exitUsage
	}
	return exitFailure
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// flagSet is a command's flags and its usage text.
type flagSet struct {
	*flag.FlagSet
	usage  string
	stdout io.Writer
}

// newFlagSet returns the flags of a command, whose usage text --help
// prints to stdout, before the flags.
func (c *cli) newFlagSet(name, usage string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a parse error is returned, and printed once by exitCode
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, usage: usage, stdout: c.stdout}
}

// parse parses args with flags and positional arguments in any order
// (payments trigger payment.completed --help), and returns the positional
// ones. Everything after "--" is positional. --help prints the usage and
// returns flag.ErrHelp.
func (fs *flagSet) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(fs.stdout, fs.usage)
				fmt.Fprintln(fs.stdout, "\nFlags:")
				fs.SetOutput(fs.stdout)
				fs.PrintDefaults()
				return nil, err
			}
			return nil, usagef("%s: %v (see %s --help)", fs.Name(), err, fs.Name())
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// client makes the API client from the environment, as
// payments.NewClientFromEnv does, from c.getenv.
func (c *cli) client() (*payments.Client, error) {
	key, baseURL := c.getenv(envAPIKey), c.getenv(envBaseURL)
	switch {
	case key == "":
		return nil, usagef("%s is not set: export the API key (it is never taken as a flag, to keep it out of shell history)", envAPIKey)
	case baseURL == "":
		return nil, usagef("%s is not set: export the service's base URL (cmd/payments-sandbox prints both lines)", envBaseURL)
	}
	opts := []payments.Option{payments.WithBaseURL(baseURL), payments.WithUserAgent("payments-cli/" + payments.Version)}
	if c.getenv(envInsecureHTTP) == "1" {
		opts = append(opts, payments.WithInsecurePlainHTTP())
	}
	return payments.NewClient(key, opts...)
}

// sinceValue is a --since flag: an RFC 3339 time, or a duration before now
// (1h, 30m), resolved against the service's clock when it is known.
type sinceValue struct {
	at  time.Time
	ago time.Duration
	set bool
}

func (s *sinceValue) String() string {
	switch {
	case !s.set:
		return ""
	case s.ago > 0:
		return s.ago.String()
	default:
		return s.at.Format(time.RFC3339)
	}
}

func (s *sinceValue) Set(v string) error {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		*s = sinceValue{at: t, set: true}
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return errors.New("give an RFC 3339 time (2025-01-31T09:00:00Z) or a duration before now (90s, 30m, 1h)")
	}
	*s = sinceValue{ago: d, set: true}
	return nil
}

// resolve returns the time s names, with now the current time.
func (s *sinceValue) resolve(now time.Time) time.Time {
	if s.ago > 0 {
		return now.Add(-s.ago)
	}
	return s.at
}

// typesValue is a repeatable flag of event types, each also
// comma-separated.
type typesValue []payments.EventType

func (t *typesValue) String() string {
	var s []string
	for _, v := range *t {
		s = append(s, string(v))
	}
	return strings.Join(s, ",")
}

func (t *typesValue) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part == "" {
			return errors.New("give event types such as payment.completed, comma-separated or repeated")
		}
		*t = append(*t, payments.EventType(part))
	}
	return nil
}

// eventTypeList lists the specification's event types for a usage text.
func eventTypeList() string {
	var b strings.Builder
	for _, t := range eventKinds {
		b.WriteString("  " + string(t) + "\n")
	}
	return b.String()
}

// show returns s as it is when it is one word of printable characters (an
// event id or type, a stan), and Go-quoted otherwise, so that what the
// service sends cannot move the cursor or forge a line on the terminal.
func show(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == '"' }) {
		return strconv.Quote(s)
	}
	return s
}
