package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/internal/readmecheck"
)

// The pool has a connection for every worker and more, unless
// DATABASE_URL says how many it wants.
func TestPoolConfigHasRoomForTheWorkers(t *testing.T) {
	cfg, err := poolConfig("postgres://u@localhost:5432/db")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns < int32(pgstore.DefaultWorkers+8) {
		t.Errorf("MaxConns %d, want at least %d (the workers and 8 more)", cfg.MaxConns, pgstore.DefaultWorkers+8)
	}
	cfg, err = poolConfig("postgres://u@localhost:5432/db?pool_max_conns=5")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != 5 {
		t.Errorf("MaxConns %d, want DATABASE_URL's 5", cfg.MaxConns)
	}
}

// The walk-through in docs/webhooks.md's "Trying it on your machine" runs
// as written: it builds this program, starts the sandbox with the command
// docs/testing.md's tested walk-through has, and every pg-queue line is a
// command line this program accepts.
func TestDocsTrialCommandsAreThisProgramsCommandLines(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "webhooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	section, ok := readmecheck.Section(string(md), "### Trying it on your machine")
	if !ok {
		t.Fatal(`docs/webhooks.md has no "### Trying it on your machine"`)
	}
	blocks := readmecheck.Code(section, "sh")
	if len(blocks) != 1 {
		t.Fatalf("%d sh blocks in the section, want 1", len(blocks))
	}
	walk, err := os.ReadFile(filepath.Join("..", "..", "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	commands := map[string]bool{}
	for _, line := range strings.Split(blocks[0], "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "export DATABASE_URL="):
		case line == "go build -o pg-queue ./examples/pg-queue":
		case strings.HasPrefix(line, "go run ./cmd/payments-sandbox "):
			if !strings.Contains(string(walk), "\n"+line+"\n") {
				t.Errorf("the sandbox's command %q is not the one docs/testing.md's walk-through runs", line)
			}
		case strings.HasPrefix(line, "./pg-queue "):
			var stderr strings.Builder
			cl, err := parseCommandLine(strings.Fields(line)[1:], &stderr)
			if err != nil {
				t.Errorf("%q: %v\n%s", line, err, stderr.String())
			}
			commands[cl.cmd] = true
		default:
			t.Errorf("%q: a line this test does not know; hold it to the program here", line)
		}
	}
	for _, cmd := range []string{"migrate", "receive", "work", "await"} {
		if !commands[cmd] {
			t.Errorf("the walk-through never runs pg-queue %s", cmd)
		}
	}
}

// The command line: flags before or after the command and after
// REFERENCE; -h is no error; a wrong command line says what is wrong.
func TestCommandLine(t *testing.T) {
	for _, args := range [][]string{
		{"-own-river", "work", "-call-time", "3s"},
		{"work", "-own-river", "-call-time=3s"},
	} {
		cl, err := parseCommandLine(args, io.Discard)
		if err != nil || cl.cmd != "work" || !cl.ownRiver || cl.callTime != 3*time.Second {
			t.Errorf("%q: %+v, %v; want work on its own River with a 3 s call", args, cl, err)
		}
	}
	cl, err := parseCommandLine([]string{"await", "order-1", "-timeout", "5s"}, io.Discard)
	if err != nil || cl.cmd != "await" || cl.reference != "order-1" || cl.timeout != 5*time.Second {
		t.Errorf("await order-1 -timeout 5s: %+v, %v", cl, err)
	}
	var help strings.Builder
	if _, err := parseCommandLine([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(help.String(), "DATABASE_URL") || !strings.Contains(help.String(), "-call-time") {
		t.Errorf("-h: %v, printed:\n%s", err, help.String())
	}
	for args, want := range map[string]string{
		"":               "name a command",
		"frob":           `unknown command "frob"`,
		"await":          "await takes one REFERENCE",
		"work extra":     `work takes no argument, got ["extra"]`,
		"work -call-tim": "flag provided but not defined: -call-tim",
	} {
		var stderr strings.Builder
		if _, err := parseCommandLine(strings.Fields(args), &stderr); err == nil || !strings.Contains(stderr.String(), want) {
			t.Errorf("%q: %v, printed %q; want an error that says %q", args, err, stderr.String(), want)
		}
	}
}
