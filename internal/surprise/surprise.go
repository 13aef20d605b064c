// Package surprise holds what the client and the webhook receiver share to
// notice what the assumed contract did not expect: a set that says whether
// a surprise is met for the first time, and a scanner of a JSON object's
// members that allocates nothing.
package surprise

import (
	"bytes"
	"sync"
	"unicode/utf8"
)

// MaxRemembered bounds the distinct surprises a Set remembers: past it,
// nothing is new any more (so nothing more is logged), whatever a sender
// makes up.
const MaxRemembered = 256

// Set remembers the surprises met so far. The zero Set is ready; it is safe
// for concurrent use.
type Set struct {
	mu   sync.Mutex
	seen map[[2]string]struct{}
}

// First reports whether the surprise (kind, detail) is met for the first
// time, and remembers it. Past MaxRemembered distinct ones it reports false.
func (s *Set) First(kind, detail string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{kind, detail}
	if _, ok := s.seen[k]; ok || len(s.seen) >= MaxRemembered {
		return false
	}
	if s.seen == nil {
		s.seen = make(map[[2]string]struct{})
	}
	s.seen[k] = struct{}{}
	return true
}

// maxDetail bounds a detail's length, in bytes.
const maxDetail = 80

// Clean makes s fit for a log line and a metric's neighbour: printable
// ASCII (anything else is '?'), at most 80 bytes (cut with "...").
func Clean(s string) string {
	b := make([]byte, 0, min(len(s), maxDetail+3))
	for i := 0; i < len(s); {
		if len(b) >= maxDetail {
			return string(b) + "..."
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			_, n := utf8.DecodeRuneInString(s[i:])
			b = append(b, '?')
			i += n
			continue
		}
		if c < 0x20 || c == 0x7f {
			c = '?'
		}
		b = append(b, c)
		i++
	}
	return string(b)
}

// Members calls fn with the name (raw, as written between its quotes) and
// the value (raw JSON) of each member of the JSON object obj, in order, and
// stops when fn returns false. It reports false when obj is not an object it
// could walk to its end (then fn may have seen some members). It allocates
// nothing and never panics, whatever obj holds.
func Members(obj []byte, fn func(name, value []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return false
		}
		end := skipString(obj, i)
		if end < 0 {
			return false
		}
		name := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		start := skipSpace(obj, i+1)
		end = skipValue(obj, start)
		if end < 0 {
			return false
		}
		if !fn(name, obj[start:end]) {
			return true
		}
		i = skipSpace(obj, end)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case ',':
			i = skipSpace(obj, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// Member returns the value of obj's last member named name (as encoding/json
// reads it: the last one wins, its name in any case), or nil.
func Member(obj []byte, name string) []byte {
	var found []byte
	Members(obj, func(n, v []byte) bool {
		if bytes.EqualFold(n, []byte(name)) {
			found = v
		}
		return true
	})
	return found
}

// String returns the text of a JSON string value without escapes, and
// whether v is one.
func String(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v[1:len(v)-1], '\\') >= 0 {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'), or
// -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// The kinds of surprise, as payments.SurpriseKind's constants spell them.
const (
	UnknownField    = "unknown_field"
	PaymentStatus   = "payment_status"
	ErrorBody       = "error_body"
	SuccessStatus   = "success_status"
	EventKind       = "event_kind"
	SignatureHeader = "signature_header"
	RateLimitHeader = "rate_limit_header"
)

// LogMessage is the message of the log line written the first time a
// surprise is met.
const LogMessage = "payments: the service differs from the SDK's assumptions (logged once; see docs/assumptions.md)"

// KnownPaymentStatus reports whether s is one of payments.PaymentStatus's
// constants.
func KnownPaymentStatus(s string) bool {
	switch s {
	case "pending", "completed", "failed", "rejected":
		return true
	}
	return false
}

// KnownEventKind reports whether s is one of the specification's event
// kinds (payments.Event... constants).
func KnownEventKind(s string) bool {
	switch s {
	case "payment.initiated", "payment.completed", "payment.failed", "payment.rejected",
		"virtual_account.payment_received", "virtual_account.created", "virtual_account.updated",
		"recipient.created", "recipient.verified", "recipient.verification_failed",
		"account.balance_low", "account.updated":
		return true
	}
	return false
}

// Fields is a set of member names.
type Fields map[string]struct{}

// NewFields returns the set of names.
func NewFields(names ...string) Fields {
	f := make(Fields, len(names))
	for _, n := range names {
		f[n] = struct{}{}
	}
	return f
}

// Has reports whether name is in the set, as encoding/json matches names:
// exactly, else in any case.
func (f Fields) Has(name []byte) bool {
	if _, ok := f[string(name)]; ok {
		return true
	}
	for n := range f {
		if len(n) == len(name) && bytes.EqualFold([]byte(n), name) {
			return true
		}
	}
	return false
}

// Unknown calls add for each member of obj not in known, named under prefix
// ("data."), and nested, when not nil, for each known one.
func Unknown(obj []byte, known Fields, prefix string, add func(kind, detail string), nested func(name, value []byte)) {
	Members(obj, func(name, value []byte) bool {
		if !known.Has(name) {
			add(UnknownField, prefix+string(name))
		} else if nested != nil {
			nested(name, value)
		}
		return true
	})
}

// eventFields are a webhook body's members (docs/assumptions.md, "Webhook
// body"); "type", which payments.ParseEvent accepts for "event", is a
// surprise.
var eventFields = NewFields("id", "event", "created_at", "data")

// Event calls add for what an event holds that the SDK does not assume: a
// kind the specification does not list, members of its body (raw) other
// than id, event, created_at and data (named under prefix, such as
// "event."), and, in a payment event, a status (in data) outside the known
// ones.
func Event(raw, data []byte, kind, prefix string, add func(kind, detail string)) {
	if !KnownEventKind(kind) {
		add(EventKind, kind)
	}
	Unknown(raw, eventFields, prefix, add, nil)
	if len(kind) > 8 && kind[:8] == "payment." {
		if st, ok := String(Member(data, "status")); ok && st != "" && !KnownPaymentStatus(st) {
			add(PaymentStatus, st)
		}
	}
}
