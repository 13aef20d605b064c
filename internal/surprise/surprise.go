// Package surprise holds what the client and the webhook receiver share to
// notice what the assumed contract did not expect: a set that says whether
// a surprise is met for the first time, and a scanner of a JSON object's
// members that allocates nothing.
package surprise

import (
	"bytes"
	"slices"
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
	stopped := false
	end := Object(obj, skipSpace(obj, 0), func(name []byte, at int) int {
		end := Skip(obj, at)
		if end >= 0 && !fn(name, obj[at:end]) {
			stopped = true
			return -1
		}
		return end
	})
	return stopped || end >= 0
}

// Object walks the members of the JSON object that starts at b[i] (its
// '{'), in one pass: member is called with each member's name (raw, as
// written between its quotes) and the index of its value in b, and returns
// the index just after that value, having walked the value itself (another
// Object, for a nested object read member by member) or skipped it (Skip);
// -1 stops the walk. Object returns the index just after the object, or -1
// when b holds no well-formed object at i or member stopped. It allocates
// nothing and never panics, whatever b holds.
func Object(b []byte, i int, member func(name []byte, at int) int) int {
	if i < 0 || i >= len(b) || b[i] != '{' {
		return -1
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for i < len(b) {
		if b[i] != '"' {
			return -1
		}
		end := skipString(b, i)
		if end < 0 {
			return -1
		}
		name := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		start := skipSpace(b, i+1)
		if start >= len(b) {
			return -1
		}
		end = member(name, start)
		if end < 0 || end > len(b) {
			return -1
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
	return -1
}

// Skip returns the index just after the JSON value that starts at b[i], or
// -1 when none does.
func Skip(b []byte, i int) int { return skipValue(b, i) }

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
// -1. It jumps from quote to quote (bytes.IndexByte), and a quote preceded by
// an odd number of backslashes is escaped.
func skipString(b []byte, i int) int {
	for j := i + 1; j <= len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		escapes := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			escapes++
		}
		if escapes%2 == 0 {
			return q + 1
		}
		j = q + 1
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

// Fields is a set of member names. The zero Fields is empty.
type Fields struct{ set *fieldSet }

// fieldSet holds the names in an open-addressed table: a lookup costs a
// hash of three bytes and one comparison, a third of a map's on the scan
// of every successful body (BenchmarkDataSurprises).
type fieldSet struct {
	names []string
	slots [fieldSlots]uint8 // 1 + the index of a name in names; 0: empty
}

// fieldSlots is the table's size: a set holds fewer than half as many names.
const fieldSlots = 256

func slotOf(name []byte) int {
	n := len(name)
	if n == 0 {
		return 0
	}
	return (n*131 + int(name[0])*31 + int(name[n/2])*7 + int(name[n-1])) % fieldSlots
}

// NewFields returns the set of names (at most 127 of them).
func NewFields(names ...string) Fields {
	if len(names) >= fieldSlots/2 {
		panic("surprise: too many names for a Fields")
	}
	f := &fieldSet{names: slices.Clone(names)}
	for i, n := range f.names {
		h := slotOf([]byte(n))
		for f.slots[h] != 0 && f.names[f.slots[h]-1] != n {
			h = (h + 1) % fieldSlots
		}
		f.slots[h] = uint8(i + 1)
	}
	return Fields{f}
}

// Has reports whether name is in the set, as encoding/json matches names:
// exactly, else in any case.
func (f Fields) Has(name []byte) bool {
	if f.set == nil {
		return false
	}
	for h := slotOf(name); f.set.slots[h] != 0; h = (h + 1) % fieldSlots {
		if string(name) == f.set.names[f.set.slots[h]-1] {
			return true
		}
	}
	for _, n := range f.set.names {
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
	paymentStatus(data, kind, add)
}

// EventMember reports whether name is one of an event body's members that
// Event does not report (id, event, created_at, data), as written.
func EventMember(name []byte) bool {
	switch string(name) {
	case "id", "event", "created_at", "data":
		return true
	}
	return false
}

// EventData calls add for what Event reports beside the body's members: a
// kind the specification does not list and, in a payment event, a status
// (in data) outside the known ones.
func EventData(data []byte, kind string, add func(kind, detail string)) {
	if !KnownEventKind(kind) {
		add(EventKind, kind)
	}
	paymentStatus(data, kind, add)
}

// paymentStatus calls add for the status in the data of a payment event
// when it is not a known one.
func paymentStatus(data []byte, kind string, add func(kind, detail string)) {
	if len(kind) > 8 && kind[:8] == "payment." {
		// The status's bytes, compared without making a string of them.
		st := Member(data, "status")
		if len(st) < 2 || st[0] != '"' || st[len(st)-1] != '"' || bytes.IndexByte(st[1:len(st)-1], '\\') >= 0 {
			return
		}
		if st = st[1 : len(st)-1]; len(st) > 0 && !knownPaymentStatus(st) {
			add(PaymentStatus, string(st))
		}
	}
}

func knownPaymentStatus(s []byte) bool {
	switch string(s) {
	case "pending", "completed", "failed", "rejected":
		return true
	}
	return false
}
