package paymentstest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// idempotencyRetention is how long a stored answer is replayed, on the
// server's clock.
const idempotencyRetention = 24 * time.Hour

// maxIdempotencyKeyLen bounds an Idempotency-Key header.
const maxIdempotencyKeyLen = 255

// idemKey scopes a key to the API key, the method and the path: the same key
// sent to two endpoints names two operations.
type idemKey struct {
	apiKey [32]byte
	method string
	path   string
	key    string
}

type idemEntry struct {
	body    [32]byte // hash of the canonical body
	done    bool
	resp    *response
	created time.Time
}

type idemOutcome int

const (
	idemProceed    idemOutcome = iota // first use: do the work, then finish
	idemReplay                        // answered before: replay entry.resp
	idemInProgress                    // the first request is still running
	idemMismatch                      // the key was used with another body
)

// idempotency stores the first answer to each key.
type idempotency struct {
	mu sync.Mutex
	m  map[idemKey]*idemEntry
}

// begin looks key up and, on first use, reserves it so that a concurrent
// request with the same key gets idemInProgress instead of doing the work
// a second time.
func (st *idempotency) begin(k idemKey, body [32]byte, now time.Time) (idemOutcome, *idemEntry) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.m == nil {
		st.m = make(map[idemKey]*idemEntry)
	}
	e, ok := st.m[k]
	if ok && e.done && now.Sub(e.created) >= idempotencyRetention {
		delete(st.m, k)
		ok = false
	}
	switch {
	case !ok:
		e = &idemEntry{body: body, created: now}
		st.m[k] = e
		return idemProceed, e
	case e.body != body:
		return idemMismatch, e
	case !e.done:
		return idemInProgress, e
	}
	return idemReplay, e
}

// finish stores the answer of a reserved key. A nil answer (the work was
// abandoned) or a server error releases the key, so that a retry does the
// work.
func (st *idempotency) finish(k idemKey, e *idemEntry, resp *response) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if resp == nil || resp.status >= http.StatusInternalServerError {
		if st.m[k] == e {
			delete(st.m, k)
		}
		return
	}
	e.resp = resp
	e.done = true
}

// canonicalHash hashes a body so that two encodings of the same JSON value
// (key order, white space) compare equal. A body that is not JSON is hashed
// as it is.
func canonicalHash(body []byte) [32]byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil {
		if _, err := dec.Token(); err == io.EOF {
			if c, err := json.Marshal(v); err == nil {
				return sha256.Sum256(c)
			}
		}
	}
	return sha256.Sum256(body)
}

func validIdempotencyKey(k string) bool {
	if len(k) > maxIdempotencyKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}
