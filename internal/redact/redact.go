// Package redact is the one place where the SDK masks secrets and personal
// data, and neutralises hostile characters, in text it did not write itself
// (messages, codes and headers from the service, errors of the network stack)
// before that text reaches an error string or a log line.
package redact

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Masked replaces a value that is hidden entirely.
const Masked = "[redacted]"

var (
	// A JSON Web Token: three base64url segments, the first one starting
	// like an encoded JSON object.
	jwtPattern = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
	// A bearer credential of any shape.
	bearerPattern = regexp.MustCompile(`(?i)bearer\s+[^\s"',;]+`)
	// Eight or more digits, possibly grouped by single spaces: account
	// numbers, BVNs, identification numbers. Dates (2024-01-31) are left.
	digitsPattern = regexp.MustCompile(`\d(?: ?\d){7,}`)
	// A UUID: an identifier, never personal data, so its digits are kept.
	uuidPattern = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// An email address.
	emailPattern = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
	// A Standard Webhooks signing secret: whsec_ and base64.
	whsecPattern = regexp.MustCompile(`whsec_[A-Za-z0-9+/=_-]*`)
	// A run of 32 or more hexadecimal digits: a Payments-Signature secret
	// (hex), a signature or a key. (A UUID's groups are shorter.)
	hexPattern = regexp.MustCompile(`\b[0-9A-Fa-f]{32,}\b`)
)

// String returns s with the given secrets, anything shaped like a bearer
// token, a JWT or a webhook signing secret (whsec_..., or 32 hex digits and
// more), email addresses, and every account-number-like run of eight or more digits
// masked, and with control characters escaped and invalid UTF-8 replaced
// (see Clean). Digit runs keep their last four digits so that a person can
// still tell accounts apart. UUIDs, the literal values in keep (a stan), and
// amounts (see amountAt: a decimal number, or a number beside a currency or a
// word such as balance, amount, total or fee) are left whole: the message
// that says how much to fund must reach the merchant as sent.
func String(s string, keep []string, secrets ...string) string {
	if s == "" {
		return s
	}
	s = emailPattern.ReplaceAllString(tokens(secretsOnly(s, secrets)), Masked)
	var b strings.Builder
	prev := 0
	for _, span := range protected(s, keep) {
		maskDigits(&b, s, prev, span[0])
		b.WriteString(s[span[0]:span[1]])
		prev = span[1]
	}
	return Clean(b.String())
}

// protected returns the spans of s to leave alone (UUIDs and the keep
// values), in order, ending with the empty span at len(s).
func protected(s string, keep []string) [][2]int {
	var spans [][2]int
	for _, m := range uuidPattern.FindAllStringIndex(s, -1) {
		spans = append(spans, [2]int{m[0], m[1]})
	}
	for _, k := range keep {
		if len(k) < 4 {
			continue
		}
		for off := 0; ; {
			i := strings.Index(s[off:], k)
			if i < 0 {
				break
			}
			spans = append(spans, [2]int{off + i, off + i + len(k)})
			off += i + len(k)
		}
	}
	// Sort by start and merge overlaps (few spans: insertion sort).
	for i := 1; i < len(spans); i++ {
		for j := i; j > 0 && spans[j][0] < spans[j-1][0]; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	out := spans[:0]
	for _, sp := range spans {
		if n := len(out); n > 0 && sp[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], sp[1])
			continue
		}
		out = append(out, sp)
	}
	return append(out, [2]int{len(s), len(s)})
}

// maskDigits writes s[from:to] to b with its account-number-like digit runs
// masked; the text around the segment (in s) decides what is an amount.
func maskDigits(b *strings.Builder, s string, from, to int) {
	prev := from
	for _, m := range digitsPattern.FindAllStringIndex(s[from:to], -1) {
		start, end := from+m[0], from+m[1]
		if amountAt(s, start, end) {
			continue
		}
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, s[start:end])
		b.WriteString(s[prev:start])
		b.WriteString("****" + digits[len(digits)-4:])
		prev = end
	}
	b.WriteString(s[prev:to])
}

// Secrets returns s with each of the given secrets (of four characters or
// more) masked, control characters escaped and invalid UTF-8 replaced, and
// nothing else changed: for values such as error codes and field names,
// whose digits must stay.
func Secrets(s string, secrets ...string) string {
	if s == "" {
		return s
	}
	return Clean(secretsOnly(s, secrets))
}

// tokens masks what is shaped like a credential, whoever's it is: a bearer
// token, a JWT (the API key's form), a whsec_ secret and a run of 32 or more
// hex digits (a Payments-Signature secret's form).
func tokens(s string) string {
	s = bearerPattern.ReplaceAllString(s, "Bearer "+Masked)
	s = jwtPattern.ReplaceAllString(s, Masked)
	s = whsecPattern.ReplaceAllString(s, Masked)
	return hexPattern.ReplaceAllString(s, Masked)
}

func secretsOnly(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, Masked)
		}
	}
	return s
}

// Clean makes text safe to print on one line: invalid UTF-8 becomes U+FFFD,
// and control characters (line breaks, ANSI escapes, DEL, C1 controls) and
// bidirectional overrides are written as Go escapes (\n, \x1b, \u202e), so
// that a service cannot forge a log line or restyle a terminal.
func Clean(s string) string {
	// Printable ASCII, what nearly every value is, needs nothing: a byte
	// loop says so at a fraction of the cost of decoding runes.
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return s
	}
	clean := true
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || needsEscape(r) {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case needsEscape(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// Mask hides a value of personal data entirely: it keeps no character of s,
// only whether it was set.
func Mask(s string) string {
	if s == "" {
		return ""
	}
	return Masked
}

// LastFour hides all but the last four characters of an account or phone
// number, so that a person can still tell two apart; shorter values are
// hidden entirely, as "****" ("" stays ""). It is idempotent: a masked value
// masked again is the same, so a value encoded, decoded and encoded again
// does not change.
func LastFour(s string) string {
	r := []rune(s)
	if len(r) == 0 {
		return ""
	}
	if len(r) <= 4 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}
