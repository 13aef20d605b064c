package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/internal/testservers"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// syncBuffer is a bytes.Buffer that a running command writes while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// work started while PostgreSQL is down waits for it, with back-off, and
// says so in its log; once the database is back it pays the file, and
// stops with 0 when told to.
func TestWorkWaitsForTheDatabase(t *testing.T) {
	pg := testservers.StartPostgres(t)
	db := newDB(t, pg.URL())
	srv := paymentstest.NewServer()
	defer srv.Close()
	path := csvFile(t, "w.csv")
	rows := makeRows(t, srv, 3, path, "w", nil)
	getenv := env(db, srv)
	loadFile(t, getenv, path, "w")
	pg.Stop(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"work"}, fastWork...), getenv, &out, &errOut, func(io.Writer) bool { return false })
	}()
	waitFor(t, time.Minute, "two waits logged", func() bool {
		return strings.Count(errOut.String(), "payouts-river work: waiting for the database") >= 2
	})
	select {
	case status := <-done:
		t.Fatalf("work ended with %d while the database was down: %s", status, errOut.String())
	default:
	}
	if log := errOut.String(); !strings.Contains(log, "retry_in=1s") || !strings.Contains(log, "retry_in=2s") {
		t.Errorf("the waits do not back off:\n%s", log)
	}
	pg.Start(t)
	waitFor(t, 2*time.Minute, "the file paid once the database is back", func() bool {
		return dbCount(db, `SELECT count(*) FROM payouts WHERE run = 'w' AND state = 'completed'`) == len(rows)
	})
	cancel()
	if status := <-done; status != exitCompleted {
		t.Errorf("work ended with %d: %s", status, errOut.String())
	}
	paidOnce(t, srv, rows)
}
