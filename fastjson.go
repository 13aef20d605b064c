package payments

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// fastReader is the JSON reader of the one-pass decode (fastdecode.go): it
// validates what it passes over as encoding/json's scanner would, and
// reads only what that decode takes (see fastdecode.go for what it leaves
// to encoding/json).

// maxFastDepth bounds the nesting fastReader validates; deeper values are
// left to encoding/json (whose own bound is 10,000).
const maxFastDepth = 64

// fastReader reads JSON from b, at i. Each method reads the value at i
// (after any space), advances past it, and reports false when it will not
// take it: the caller then gives up.
type fastReader struct {
	b     []byte
	i     int
	depth int
}

func (r *fastReader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek is the first byte of the next value (0 at the end).
func (r *fastReader) peek() byte {
	r.space()
	if r.i >= len(r.b) {
		return 0
	}
	return r.b[r.i]
}

// plainString reads a string without escapes, in valid UTF-8, and returns
// its text (a slice of b).
func (r *fastReader) plainString() ([]byte, bool) {
	if r.peek() != '"' {
		return nil, false
	}
	start := r.i + 1
	ascii := true
	for j := start; j < len(r.b); j++ {
		c := r.b[j]
		switch {
		case c == '"':
			r.i = j + 1
			s := r.b[start:j]
			return s, ascii || utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// literal reads true, false or null, whichever lit is.
func (r *fastReader) literal(lit string) bool {
	if len(r.b)-r.i < len(lit) || string(r.b[r.i:r.i+len(lit)]) != lit {
		return false
	}
	r.i += len(lit)
	return true
}

// null reads a null if one is next, and reports whether it did.
func (r *fastReader) null() bool {
	return r.peek() == 'n' && r.literal("null")
}

// str reads a string into dst; null leaves dst as it is (encoding/json).
func (r *fastReader) str(dst *string) bool {
	if r.null() {
		return true
	}
	s, ok := r.plainString()
	if ok {
		*dst = string(s)
	}
	return ok
}

// boolean reads true or false into dst; null leaves dst as it is.
func (r *fastReader) boolean(dst *bool) bool {
	switch r.peek() {
	case 't':
		*dst = true
		return r.literal("true")
	case 'f':
		*dst = false
		return r.literal("false")
	case 'n':
		return r.literal("null")
	}
	return false
}

// raw reads any valid JSON value and returns it, as encoding/json hands it
// to an UnmarshalJSON method: from its first byte to its last.
func (r *fastReader) raw() ([]byte, bool) {
	if r.peek() == 0 {
		return nil, false
	}
	start := r.i
	if !r.skip() {
		return nil, false
	}
	return r.b[start:r.i], true
}

// unmarshal hands the next value to u, as encoding/json does for a field
// whose type has an UnmarshalJSON method (a time, an amount): null
// included.
func (r *fastReader) unmarshal(u json.Unmarshaler) bool {
	v, ok := r.raw()
	return ok && u.UnmarshalJSON(v) == nil
}

// decimalPtr reads a *decimal.Decimal member as encoding/json does: null
// sets it to nil; any other value goes to a new Decimal's UnmarshalJSON.
func (r *fastReader) decimalPtr(dst **decimal.Decimal) bool {
	if r.null() {
		*dst = nil
		return true
	}
	d := new(decimal.Decimal)
	if !r.unmarshal(d) {
		return false
	}
	*dst = d
	return true
}

// skip validates and passes over one value of any kind.
func (r *fastReader) skip() bool {
	switch c := r.peek(); {
	case c == '"':
		return r.skipString()
	case c == '{':
		return r.object(func(r *fastReader, _ []byte) int { return ok(noField, r.skip()) })
	case c == '[':
		return r.array(func(r *fastReader) bool { return r.skip() })
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number()
	}
	return false
}

// skipString validates a string, escapes included.
func (r *fastReader) skipString() bool {
	for j := r.i + 1; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			r.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(r.b) {
				return false
			}
			switch r.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(r.b) {
					return false
				}
				for _, h := range r.b[j+1 : j+5] {
					if !isHex(h) {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number validates a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *fastReader) number() bool {
	b, i := r.b, r.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	r.i = i
	return true
}

// array reads an array, calling elem for each element.
func (r *fastReader) array(elem func(r *fastReader) bool) bool {
	entered, done := r.enter('[', ']')
	for entered && !done {
		if !elem(r) {
			return false
		}
		entered, done = r.next(']')
	}
	return entered
}

// enter passes over open, the '[' or '{' that starts a value, and over
// close when the value is empty: it reports whether it could, and whether
// the value is done.
func (r *fastReader) enter(open, close byte) (entered, done bool) {
	if r.peek() != open || r.depth >= maxFastDepth {
		return false, false
	}
	r.depth++
	r.i++
	if r.peek() == close {
		r.i++
		r.depth--
		return true, true
	}
	return true, false
}

// next passes over what follows an element or a member: a ',', or close,
// which ends the value (done). ok is false when neither follows.
func (r *fastReader) next(close byte) (ok, done bool) {
	switch r.peek() {
	case ',':
		r.i++
		return true, false
	case close:
		r.i++
		r.depth--
		return true, true
	}
	return false, false
}

// noField is what an object's member function returns for a member it
// passed over without filling a field.
const noField = 64

// object reads an object, calling member with each member's name (a
// slice of b), the reader at its value. member reads the value and
// returns the number (0 to 63) of the field it filled, noField, or -1 to
// give up. A field filled twice gives up: encoding/json's handling of a
// repeated member (the last wins, a nested object merges) is left to it.
// Names are taken as written: one with an escape gives up.
func (r *fastReader) object(member func(r *fastReader, name []byte) int) bool {
	entered, done := r.enter('{', '}')
	var seen uint64
	for entered && !done {
		name, isName := r.plainString()
		if !isName || r.peek() != ':' {
			return false
		}
		r.i++
		switch k := member(r, name); {
		case k == noField:
		case k < 0 || k > 63 || seen&(1<<k) != 0:
			return false
		default:
			seen |= 1 << k
		}
		entered, done = r.next('}')
	}
	return entered
}

// ok turns a member's success into its field number k, or -1.
func ok(k int, read bool) int {
	if read {
		return k
	}
	return -1
}
