package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/outcometest"
	"github.com/paymentsapi/payments-go/internal/readmecheck"
	"github.com/paymentsapi/payments-go/internal/testservers"
	outcomes "github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// readmeSection returns the section under heading of the guide in docs/
// named file, up to the next one.
func readmeSection(t *testing.T, file, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/" + file)
	require.NoError(t, err)
	sec, ok := readmecheck.Section(string(b), heading)
	require.True(t, ok, "docs/%s has no section %q", file, heading)
	return sec
}

// shellLines returns the lines of the section's sh blocks.
func shellLines(sec string) []string {
	var lines []string
	for _, code := range readmecheck.Code(sec, "sh") {
		lines = append(lines, strings.Split(strings.TrimSuffix(code, "\n"), "\n")...)
	}
	return lines
}

// TestREADMECommands: every payments command the README shows parses as
// it is written (its flags exist and take the values given), and the
// output it shows for listen has the shape listen prints.
func TestREADMECommands(t *testing.T) {
	var cmds int
	var sample []string
	for file, heading := range map[string]string{"cli.md": "## The command-line tool: `payments`", "reconciliation.md": "## When a webhook never arrives",
		"when-the-service-differs.md": "## Running doctor"} {
		sec := readmeSection(t, file, heading)
		if heading == "## When a webhook never arrives" {
			// Inline commands: `payments ...`.
			for _, m := range regexp.MustCompile("`(payments [^`]+)`").FindAllStringSubmatch(sec, -1) {
				sample = append(sample, m[1])
			}
		}
		for _, line := range shellLines(sec) {
			switch {
			case strings.HasPrefix(line, "payments "):
				sample = append(sample, line)
			case strings.HasPrefix(line, "go install "):
				assert.Equal(t, "go install github.com/paymentsapi/payments-go/cmd/payments@latest", line)
			}
		}
	}
	for _, line := range sample {
		args := strings.Fields(strings.TrimPrefix(line, "payments "))
		// --help after the README's flags: they are parsed first, and
		// nothing is sent.
		code, stdout, stderr := runCLI(t, nil, append(args, "--help")...)
		assert.Equal(t, exitOK, code, "%s: %s", line, stderr)
		assert.True(t, strings.HasPrefix(stdout, "Usage: payments "+args[0]), line)
		cmds++
	}
	assert.GreaterOrEqual(t, cmds, 6, "the README's commands were not found")

	// The listen session's output lines.
	var attempts int
	attempt := regexp.MustCompile(`^# \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  [a-z_.]+  [0-9a-f-]{36}  --> POST \S+ \[\d{3}\] \d+ms( \(attempt \d of 5(, next in 1s)?\))?$`)
	for _, line := range shellLines(readmeSection(t, "cli.md", "## The command-line tool: `payments`")) {
		if regexp.MustCompile(`^# \d{4}-`).MatchString(line) {
			assert.Regexp(t, attempt, line)
			attempts++
		}
	}
	assert.Equal(t, 2, attempts)
	assert.Equal(t, "1s,2s,4s,8s", defaultRetries, "the README says 1 s, 2 s, 4 s and 8 s, and 5 attempts")
}

// docCommands returns the command lines of the sh blocks of the guide in
// docs/ named file: continuation lines joined, blank lines and comments
// left out.
func docCommands(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/" + file)
	require.NoError(t, err)
	blocks, err := readmecheck.Blocks(string(b))
	require.NoError(t, err, "docs/%s", file)
	var cmds []string
	for _, bl := range blocks {
		if bl.Lang != "sh" {
			continue
		}
		cont := ""
		for _, line := range strings.Split(strings.TrimSuffix(bl.Code, "\n"), "\n") {
			if more, ok := strings.CutSuffix(line, "\\"); ok {
				cont += more
				continue
			}
			line = strings.TrimSpace(cont + line)
			cont = ""
			if line != "" && !strings.HasPrefix(line, "#") {
				cmds = append(cmds, line)
			}
		}
	}
	return cmds
}

// docWords splits a command line of a guide with shellFields.
func docWords(t *testing.T, line string) []string {
	t.Helper()
	w, err := shellFields(line)
	require.NoError(t, err, line)
	return w
}

// shellFields splits a command line into words as a POSIX shell does when
// there is nothing to expand: words between blanks, '...' and "..."
// quoting, a backslash escaping the next character, and a # at the start
// of a word beginning a comment. It refuses what it would get wrong
// ($, `, ;, &, |, <, >, parentheses) rather than split it.
func shellFields(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("an unterminated %c", c)
			}
			quoted := line[i+1 : i+1+end]
			if c == '"' && strings.ContainsAny(quoted, "$`\\") {
				return nil, fmt.Errorf("%q: an expansion inside double quotes", quoted)
			}
			w.WriteString(quoted)
			i += end + 1
			inWord = true
		case c == '\\':
			if i+1 == len(line) {
				return nil, errors.New("a backslash at the end")
			}
			i++
			w.WriteByte(line[i])
			inWord = true
		case strings.IndexByte("$`;&|<>()", c) >= 0:
			return nil, fmt.Errorf("%q: shell syntax the test does not run", c)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

func TestShellFields(t *testing.T) {
	for line, want := range map[string][]string{
		"go run ./cmd/payments events list --limit 5    # the event ids": {"go", "run", "./cmd/payments", "events", "list", "--limit", "5"},
		"A='x y'#z B=\"q\"r payments  --json":                            {"A=x y#z", "B=qr", "payments", "--json"},
		`a\ b # c`:                                                       {"a b"},
		"# only a comment":                                               nil,
	} {
		got, err := shellFields(line)
		require.NoError(t, err, line)
		assert.Equal(t, want, got, line)
	}
	for _, line := range []string{"echo $HOME", "a && b", "echo 'open", `echo "$(x)"`, "x > y", "a\\"} {
		_, err := shellFields(line)
		assert.Error(t, err, line)
	}
}

// envAssignment matches a word that sets a variable for the command after
// it.
var envAssignment = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)

// splitEnv returns the variables a command's leading words set, and the
// rest of its words.
func splitEnv(words []string) (map[string]string, []string) {
	env := map[string]string{}
	for len(words) > 0 {
		m := envAssignment.FindStringSubmatch(words[0])
		if m == nil {
			break
		}
		env[m[1]] = m[2]
		words = words[1:]
	}
	return env, words
}

// TestREADMESandboxDashboardEventsCommands runs the "go run ./cmd/payments"
// lines of docs/sandbox-dashboard.md against the fake with its admin API,
// with only the placeholder EVENT_ID and the host of the --to URL changed
// (to an event of the fake, and a receiver of the test's): events list
// prints the event ids, events resend delivers the event again to the
// webhook URL, and with --to to that URL instead. The guide's other lines
// are run by TestREADMESandboxDashboardCommands in cmd/payments-sandbox.
func TestREADMESandboxDashboardEventsCommands(t *testing.T) {
	f := startFake(t, adminAPI())
	ctx := context.Background()
	id := triggerEvents(t, f, payments.EventPaymentCompleted)[0].ID
	require.NoError(t, f.WaitForDeliveries(ctx))
	other := newBodies(t)

	var ran int
	for _, line := range docCommands(t, "sandbox-dashboard.md") {
		if !strings.HasPrefix(line, "go run ./cmd/payments ") {
			continue
		}
		ran++
		args, to := docWords(t, line)[3:], ""
		for i, a := range args {
			switch {
			case a == "EVENT_ID":
				args[i] = id
			case i > 0 && strings.TrimLeft(args[i-1], "-") == "to":
				u, err := url.Parse(a)
				require.NoError(t, err, line)
				require.Equal(t, "localhost", u.Hostname(), "%s: --to names this machine", line)
				to = other.URL + u.Path
				args[i] = to
			}
		}
		deliveries, received := len(f.Deliveries()), len(other.all())
		code, stdout, stderr := runCLI(t, f.env, args...)
		require.Equal(t, exitOK, code, "%s: %s", line, stderr)
		require.GreaterOrEqual(t, len(args), 2, line)
		switch strings.Join(args[:2], " ") {
		case "events list":
			assert.Contains(t, stdout, "  "+id+"\n", "%s prints the event ids", line)
		case "events resend":
			require.NoError(t, f.WaitForDeliveries(ctx))
			log := f.Deliveries()
			require.Len(t, log, deliveries+1, line)
			again := log[len(log)-1]
			assert.True(t, again.Redelivery, line)
			assert.Equal(t, id, again.EventID, line)
			assert.Equal(t, paymentstest.DeliveryDelivered, again.Status, line)
			if to == "" {
				assert.Equal(t, f.webhookURL(t), again.URL, "%s: to the webhook URL", line)
				assert.Len(t, other.all(), received, line)
			} else {
				assert.Equal(t, to, again.URL, line)
				assert.Len(t, other.all(), received+1, "%s: the receiver got the event", line)
			}
		}
	}
	assert.NotZero(t, ran, "docs/sandbox-dashboard.md's go run ./cmd/payments lines were not found")
}

// TestREADMEOutcomesStuckCommands runs the "payments payments stuck" lines
// of docs/outcomes.md as they are written, the store's URL aside: first
// with a store nobody listens at, where the command must get as far as
// dialling it (its flags, arguments and variable accepted); then against
// PostgreSQL and Redis holding what a tracker wrote, with a table or prefix
// of the test's added, where it must list the payment confirmed two hours
// ago and the recipient still unverified (--json: as JSON lines).
func TestREADMEOutcomesStuckCommands(t *testing.T) {
	var ran int
	for _, line := range docCommands(t, "outcomes.md") {
		if !strings.Contains(line, "payments payments stuck") {
			continue
		}
		env, cmd := splitEnv(docWords(t, line))
		require.Equal(t, "payments", cmd[0], line)
		ran++
		args := cmd[1:]
		require.Len(t, env, 1, "%s: the store's URL comes from one variable", line)
		docURL, ok := env[envOutcomeStore]
		require.True(t, ok, "%s: the store's URL comes from %s", line, envOutcomeStore)
		u, err := url.Parse(docURL)
		require.NoError(t, err, line)
		scheme := u.Scheme

		u.Host = "127.0.0.1:1"
		code, stdout, stderr := runCLI(t, map[string]string{envOutcomeStore: u.String()}, args...)
		require.Equal(t, exitFailure, code, "%s: %s", line, stderr)
		assert.Contains(t, stderr, "127.0.0.1:1", "%s: it dialled the store", line)
		assert.Empty(t, stdout, line)

		t.Run(scheme, func(t *testing.T) {
			var store outcomes.Store
			var storeURL string
			switch scheme {
			case "postgres", "postgresql":
				srv := testservers.SharedPostgres(t)
				s, table := pgOutcomeStore(t, srv.URL())
				store, storeURL, args = s, srv.URL(), append(slices.Clone(args), "--table", table)
			case "redis":
				srv := testservers.SharedRedis(t)
				s, prefix := redisOutcomeStore(t, srv.URL())
				store, storeURL, args = s, srv.URL(), append(slices.Clone(args), "--prefix", prefix)
			default:
				t.Fatalf("%s: no test store for %s://", line, scheme)
			}
			payment, recipient := outcometest.StuckFixture(t, store) // two hours ago
			code, stdout, stderr := runCLI(t, map[string]string{envOutcomeStore: storeURL}, args...)
			require.Equal(t, exitOK, code, "%s: %s", line, stderr)
			if !olderThanLessThan(t, args, 2*time.Hour) {
				assert.Contains(t, stdout, "nothing stuck for more than", line)
				return
			}
			if slices.Contains(args, "--json") {
				got := map[string]outcomes.State{}
				for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
					var o outcomes.Outcome
					require.NoError(t, json.Unmarshal([]byte(l), &o), "%s printed %q", line, l)
					got[o.ID] = o.State
				}
				assert.Equal(t, map[string]outcomes.State{payment: outcomes.StatePending, recipient: outcomes.StateUnverified}, got, line)
				return
			}
			assert.Contains(t, stdout, payment, line)
			assert.Contains(t, stdout, recipient, line)
			assert.Contains(t, stdout, "2 stuck for more than", line)
		})
	}
	assert.NotZero(t, ran, "docs/outcomes.md's payments payments stuck lines were not found")
}

// olderThanLessThan reports whether the --older-than of args (1h when
// absent) is less than d.
func olderThanLessThan(t *testing.T, args []string, d time.Duration) bool {
	t.Helper()
	v := "1h"
	for i, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "older-than" || !strings.HasPrefix(a, "-") {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		v = value
	}
	age, err := time.ParseDuration(v)
	require.NoError(t, err)
	return age < d
}

// TestGuideWhenTheServiceDiffers: the rows docs/when-the-service-differs.md
// shows are the rows doctor prints against the sandbox told to differ as
// the guide says, and its overrides section covers every row doctor can
// find differing.
func TestGuideWhenTheServiceDiffers(t *testing.T) {
	sec := readmeSection(t, "when-the-service-differs.md", "## Reading the rows")
	blocks := readmecheck.Code(sec, "")
	require.Len(t, blocks, 1)
	require.Contains(t, sec, "(`-differ quote-renamed`:")
	f := startFake(t, adminAPI(), paymentstest.WithDifferences("quote-renamed"))
	code, stdout, _ := runCLI(t, f.with(envWebhookSecret, sinkSecret), "doctor")
	assert.Equal(t, exitFailure, code)
	printed := strings.Split(stdout, "\n")
	at := 0
	for _, line := range strings.Split(strings.TrimSuffix(blocks[0], "\n"), "\n") {
		i := slices.Index(printed[at:], line)
		require.GreaterOrEqual(t, i, 0, "doctor does not print, in this order, the guide's line\n%s\nit printed:\n%s", line, stdout)
		at += i + 1
	}

	overrides := readmeSection(t, "when-the-service-differs.md", "## The overrides")
	for _, tp := range topics {
		if tp.notProbed == "" && tp.override != "—" {
			assert.Contains(t, overrides, "**"+tp.name+"**", "the guide says nothing of overriding %s", tp.name)
		}
	}
}
