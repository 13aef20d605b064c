package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// The journal is what makes a run that was killed safe to start again. It is
// a file of JSON lines, one record per outcome learned, appended and synced
// to disk before the program goes on: a record on disk means the outcome is
// known, and a row without a final record is paid again with the same
// idempotency keys, which the service answers with what it did the first
// time, unless its last record is a refusal with a cause a later try may
// cure: that row is tried under the next key generation (see keyFor).
// Nothing is ever rewritten; the last record of a payout id is its state.

// Events of the journal.
const (
	eventInitiated = "initiated" // the quote exists: confirm it next
	eventDone      = "done"      // confirmed: the payment is the service's; its outcome follows
	eventFailed    = "failed"    // refused for good: never retried
	eventUnknown   = "unknown"   // no answer: retry with the same key
	// eventOutcome: the confirmed payment's final outcome (State), learned
	// from the service's events; the row needs nothing more.
	eventOutcome = "outcome"
	// eventRefused: refused for a cause a later try may cure (the balance,
	// the recipient's verification, an expired quote); nothing was paid.
	// The next run tries it under the next key generation.
	eventRefused = "refused"
)

// record is one line of the journal.
type record struct {
	Time     time.Time `json:"time"`
	PayoutID string    `json:"payout_id"`
	Event    string    `json:"event"`
	// Step is the call the record is about: "initiate" or "confirm".
	Step string `json:"step"`
	// IdempotencyKey is the key the step sent (derived from the payout id
	// and the generation, so the same on every run).
	IdempotencyKey string `json:"idempotency_key"`
	// Generation is the key generation of the step (0, the first, is left
	// out): see keyFor.
	Generation int `json:"generation,omitempty"`
	// Code is the service's error code of a refusal.
	Code      string `json:"code,omitempty"`
	QuoteID   string `json:"quote_id,omitempty"`
	PaymentID string `json:"payment_id,omitempty"`
	Status    string `json:"status,omitempty"`
	// Fee is the quote's fee; Stan the service's id of the confirm's answer
	// (quote it in a support ticket).
	Fee  string `json:"fee,omitempty"`
	Stan string `json:"stan,omitempty"`
	// State and EventID are a payment's final state (completed, failed,
	// rejected) and the id of the event that decided it (eventOutcome).
	State   string `json:"state,omitempty"`
	EventID string `json:"event_id,omitempty"`
	// Reason says why a step failed or its outcome is unknown: the SDK's
	// error text, which carries no secret or personal data.
	Reason string `json:"reason,omitempty"`
}

// final reports whether the payout needs no more calls to pay it: it was
// confirmed (its outcome may still be awaited) or refused for good.
func (r record) final() bool {
	return r.Event == eventDone || r.Event == eventFailed || r.Event == eventOutcome
}

// journal appends records to its file, one at a time.
type journal struct {
	mu sync.Mutex
	f  *os.File
}

// openJournal opens (or creates) the journal at path and returns the last
// record of each payout id. A last line cut short by a crash (no newline at
// its end) is dropped from the file: its outcome was never relied on. Any
// other line that does not parse is an error: the journal is not ours to
// guess about.
func openJournal(path string) (*journal, map[string]record, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	state, good, err := readJournal(f)
	if err == nil {
		err = f.Truncate(good)
	}
	if err == nil {
		_, err = f.Seek(good, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &journal{f: f}, state, nil
}

// readJournal reads the records of r and returns the last one of each payout
// id, and the length of the complete lines.
func readJournal(r io.Reader) (map[string]record, int64, error) {
	state := make(map[string]record)
	br := bufio.NewReader(r)
	var good int64
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return state, good, nil // a partial last line, if any, is dropped
		}
		if err != nil {
			return nil, 0, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var rec record
			if err := json.Unmarshal(line, &rec); err != nil || rec.PayoutID == "" {
				return nil, 0, fmt.Errorf("line %d is not a record", n)
			}
			state[rec.PayoutID] = rec
		}
		good += int64(len(line))
	}
}

// append writes rec as one line and syncs the file, so that the record
// survives the process and the machine.
func (j *journal) append(rec record) error {
	rec.Time = time.Now().UTC()
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return err
	}
	return j.f.Sync()
}

func (j *journal) close() error { return j.f.Close() }
