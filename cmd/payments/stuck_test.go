package main

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	outcomes "github.com/paymentsapi/payments-go/outcome"
)

// The command's answers to a bad command line or store (the stores
// themselves are read in stuckstore_test.go: TestStuckPostgres,
// TestStuckRedis).
func TestStuckUsage(t *testing.T) {
	cases := []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stderr string
	}{
		{"no store", nil, []string{"payments", "stuck"}, exitUsage, "give the store's URL with --store or PAYMENTS_OUTCOME_STORE"},
		{"memory", nil, []string{"payments", "stuck", "--store", "memory://"}, exitUsage, "a MemoryStore lives inside one process"},
		{"other scheme", nil, []string{"payments", "stuck", "--store", "mysql://u:pw@h/db"}, exitUsage, `scheme "mysql"`},
		{"bad table", map[string]string{envOutcomeStore: "postgres://u:pw@127.0.0.1/db"}, []string{"payments", "stuck", "--table", "Robert'); DROP"}, exitUsage, "--table"},
		{"bad sslmode", map[string]string{envOutcomeStore: "postgres://u:topsecret@127.0.0.1/db?sslmode=maybe"}, []string{"payments", "stuck"}, exitUsage, "sslmode is invalid"},
		{"password in the query", nil, []string{"payments", "stuck", "--store", "postgres://u@127.0.0.1/db?password=topsecret&sslmode=maybe"}, exitUsage, "sslmode is invalid"},
		{"sslpassword in the query", nil, []string{"payments", "stuck", "--store", "postgres://u@127.0.0.1/db?sslpassword=topsecret&sslmode=maybe"}, exitUsage, "sslmode is invalid"},
		{"negative age", nil, []string{"payments", "stuck", "--older-than", "-1h", "--store", "redis://x"}, exitUsage, "--older-than"},
		{"arguments", nil, []string{"payments", "stuck", "pay-1"}, exitUsage, "takes no arguments"},
		{"no subcommand", nil, []string{"payments"}, exitUsage, "give a subcommand (stuck"},
		{"unknown subcommand", nil, []string{"payments", "list"}, exitUsage, `payments: unknown payments subcommand "list" (stuck; see payments payments --help)`},
		{"nobody listening", nil, []string{"payments", "stuck", "--store", "redis://:topsecret@127.0.0.1:1/0"}, exitFailure, "dial tcp 127.0.0.1:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, c.env, c.args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) || strings.Contains(stderr, "topsecret") {
				t.Fatalf("exit %d, stderr %q; want %d and %q, never the password", code, stderr, c.code, c.stderr)
			}
		})
	}
	code, stdout, _ := runCLI(t, nil, "payments", "stuck", "--help")
	if code != exitOK || !strings.Contains(stdout, "payments payments stuck [--older-than 1h]") {
		t.Fatalf("--help: exit %d, %q", code, stdout)
	}
}

// serveReply answers each connection with reply (after reading the
// client's first bytes when read is set) and closes it; it returns the
// listener's address. Every connection, since a driver may try again (pgx
// without TLS after sslmode=prefer's TLS attempt failed).
func serveReply(t *testing.T, reply string, read bool) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if read {
				_, _ = c.Read(make([]byte, 8))
			}
			_, _ = c.Write([]byte(reply))
			_ = c.Close()
		}
	}()
	return l.Addr().String()
}

// A server that sends garbage gets an error, never a panic or a hang.
func TestStuckMalformedServers(t *testing.T) {
	for _, reply := range []string{"*99999999999\r\n", "$-5x\r\n", "?\r\n", "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", ""} {
		addr := serveReply(t, reply, false)
		code, _, stderr := runCLI(t, nil, "payments", "stuck", "--timeout", "5s", "--store", "redis://"+addr)
		if code != exitFailure || !strings.Contains(stderr, "payments stuck") {
			t.Fatalf("reply %q: exit %d, %q", reply, code, stderr)
		}
	}
	for _, reply := range []string{"N", "NR\x00\x00\x00\x08\x00\x00\x00\x63", "NR\xff\xff\xff\xff", "NE\x00\x00\x00\x0aSFATAL\x00\x00"} {
		addr := serveReply(t, reply, true) // read the TLS request first
		code, _, stderr := runCLI(t, nil, "payments", "stuck", "--timeout", "5s", "--store", "postgres://u:topsecret@"+addr+"/db")
		if code != exitFailure || strings.Contains(stderr, "topsecret") {
			t.Fatalf("reply %q: exit %d, %q", reply, code, stderr)
		}
	}
}

func TestPrintStuck(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	out := []outcomes.Outcome{{
		Kind: outcomes.KindPayment, ID: "pay-1", Reference: "order-1\x1b[2J", State: outcomes.StatePending, ConfirmedAt: now.Add(-90 * time.Minute),
		Steps: []outcomes.Step{{EventID: "ev-1", EventType: "payment.initiated"}},
	}, {Kind: outcomes.KindRecipient, ID: "rcp-1", State: outcomes.StateUnverified, FirstSeen: now.Add(-2 * time.Hour)}}
	var b strings.Builder
	printStuck(&cli{stdout: &b}, out, time.Hour, now)
	want := "KIND       ID     REFERENCE         STATE       SINCE                            FOR      EVENTS\n" +
		"payment    pay-1  \"order-1\\x1b[2J\"  pending     confirmed 2026-11-25T10:30:00Z   1h30m0s  payment.initiated=ev-1\n" +
		"recipient  rcp-1  -                 unverified  first seen 2026-11-25T10:00:00Z  2h0m0s   \n" +
		"2 stuck for more than 1h0m0s: 1 payments without a final outcome, 1 recipients unverified\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// A payment referenced in German, French, Yoruba or Chinese is printed with
// its reference as it is (issue 45: the tracker records such references
// now); a reference with a character that would reorder or hide text on a
// terminal (a right-to-left override, a zero-width joiner) is quoted, its
// character escaped, so that a line shows what is stored.
func TestPrintStuckReferencesInAnyScript(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	plain := []string{"Zahlung-Müller-42", "Café-Crème-7", "Ọmọ-Ọba-9", "O\u0323mo\u0323\u0301-O\u0323ba-9", "付款-北京-42"}
	escaped := map[string]string{"order-\u202e7pj.exe": `"order-\u202e7pj.exe"`, "zwj-a\u200db": `"zwj-a\u200db"`}
	var out []outcomes.Outcome
	for i, ref := range append(slices.Clone(plain), slices.Sorted(maps.Keys(escaped))...) {
		out = append(out, outcomes.Outcome{Kind: outcomes.KindPayment, ID: fmt.Sprintf("pay-%d", i), Reference: ref,
			State: outcomes.StatePending, ConfirmedAt: now.Add(-2 * time.Hour)})
	}
	var b strings.Builder
	printStuck(&cli{stdout: &b}, out, time.Hour, now)
	lines := strings.Split(b.String(), "\n")
	for i, ref := range plain {
		if f := strings.Fields(lines[1+i]); len(f) < 3 || f[1] != fmt.Sprintf("pay-%d", i) || f[2] != ref {
			t.Fatalf("line %q: want pay-%d with reference %q as it is", lines[1+i], i, ref)
		}
	}
	for ref, want := range escaped {
		if !strings.Contains(b.String(), want) || strings.Contains(b.String(), ref) {
			t.Fatalf("reference %q: want it printed as %s:\n%s", ref, want, b.String())
		}
	}
}
