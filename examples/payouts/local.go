package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// local is the fake service in this process, with recipients to pay and a
// file of payouts to them.
type local struct {
	srv    *paymentstest.Server
	client *payments.Client
	dir    string
}

// startLocal starts the fake service and writes a demo payouts file of
// cfg.rows rows to recipients saved on it (demoRows), into a new directory
// that also holds the journal (the fake forgets everything when the program
// ends, so a journal of an earlier run would name payments it never made).
func startLocal(ctx context.Context, cfg *config, opts []payments.Option) (*local, error) {
	dir, err := os.MkdirTemp("", "payouts-")
	if err != nil {
		return nil, err
	}
	// The tracker learns outcomes from the event list: keep every event.
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{LogLimit: max(10000, 10*cfg.rows)}))
	l := &local{srv: srv, client: srv.Client(opts...), dir: dir}
	rows, err := demoRows(ctx, l.client, cfg.rows)
	if err != nil {
		l.close()
		return nil, err
	}
	cfg.csvPath, cfg.journalPath = filepath.Join(dir, "payouts.csv"), filepath.Join(dir, "payouts.journal")
	if err := writeRows(cfg.csvPath, rows); err != nil {
		l.close()
		return nil, fmt.Errorf("writing the generated file: %w", err)
	}
	return l, nil
}

func (l *local) close() {
	l.srv.Close()
	os.RemoveAll(l.dir)
}
