package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// usage is what pg-queue -h prints before the flags.
const usage = `usage: pg-queue COMMAND [flags]

Commands, one per process (each migrates at start):
  migrate           create or upgrade every table, then exit
  receive           POST /webhooks: verify, enqueue once, answer 200; GET /healthz
  work              River workers run the merchant's function; reconcile on a schedule
  await REFERENCE   wait for a payment's final outcome and print it

Environment:
  DATABASE_URL             postgres://user:password@host:5432/db (every command)
  PAYMENTS_WEBHOOK_SECRET  the endpoint's signing secret; two, comma-separated, while one rotates (receive)
  PAYMENTS_WEBHOOK_ADDR    where receive listens (default :8080)
  PAYMENTS_API_KEY, PAYMENTS_BASE_URL
                           the service, for reconcile (work) and the event list (await)

Flags, before or after the command:`

// commandLine is what the command line asks for.
type commandLine struct {
	cmd       string // migrate, receive, work or await
	reference string // await's REFERENCE
	callTime  time.Duration
	every     time.Duration
	timeout   time.Duration
	listAfter time.Duration
	addr      string
	ownRiver  bool
}

// parseCommandLine reads args, whose flags may come before the command,
// after it or after REFERENCE. For -h it prints the usage and returns
// flag.ErrHelp; for a bad command line it prints what is wrong and returns
// it.
func parseCommandLine(args []string, stderr io.Writer) (commandLine, error) {
	var c commandLine
	fs := flag.NewFlagSet("pg-queue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fs.PrintDefaults()
	}
	fs.DurationVar(&c.callTime, "call-time", 0, "work: how long the merchant's call to another service takes (a pause standing for an ERP or a mail; 0: none)")
	fs.DurationVar(&c.every, "reconcile-every", 10*time.Minute, "work: how often to enqueue the service's events no delivery brought (0: never)")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "await: how long to wait for the outcome")
	fs.DurationVar(&c.listAfter, "list-after", 30*time.Second, "await: list the service's events when no webhook came within this")
	fs.StringVar(&c.addr, "addr", "", "receive: the address to listen on (default PAYMENTS_WEBHOOK_ADDR, else :8080)")
	fs.BoolVar(&c.ownRiver, "own-river", false, "the queue on a River client of the program's own, as a program that runs River for other jobs has (river.go)")
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return c, err // the flag package said what is wrong
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	var err error
	switch {
	case len(words) == 0:
		err = errors.New("name a command: migrate, receive, work or await")
	case words[0] == "help":
		fs.Usage()
		return c, flag.ErrHelp
	case words[0] == "await" && len(words) != 2:
		err = errors.New("await takes one REFERENCE: the payment's reference or id")
	case words[0] != "migrate" && words[0] != "receive" && words[0] != "work" && words[0] != "await":
		err = fmt.Errorf("unknown command %q: migrate, receive, work or await", words[0])
	case words[0] != "await" && len(words) != 1:
		err = fmt.Errorf("%s takes no argument, got %q", words[0], words[1:])
	}
	if err != nil {
		fmt.Fprintf(stderr, "pg-queue: %v (pg-queue -h lists the commands, flags and environment)\n", err)
		return c, err
	}
	c.cmd = words[0]
	if c.cmd == "await" {
		c.reference = words[1]
	}
	return c, nil
}
