// Package textrule is the one rule for the free text a merchant sends: what
// the SDK accepts before a request leaves (the root package's validation)
// and, for a payment's reference, what the outcome tracker records (package
// outcome). Both call it, so that a reference the SDK lets through is never
// one the tracker refuses (issue 45: Zahlung-Müller-42 was paid and never
// tracked). paymentstest keeps its own copy on purpose: the fake must not
// agree with a client bug by sharing its code.
package textrule

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxReference is the longest payment reference, in characters (Unicode
// code points), not bytes: 255 Chinese characters are 765 bytes of UTF-8.
const MaxReference = 255

// Problem returns what is wrong with s as free text of at most max
// characters, said so that it follows a field's name ("is not valid
// UTF-8"), or "" when nothing is: valid UTF-8, no control characters
// (unicode.IsControl: C0, DEL and C1), at most max characters. Letters and
// marks of any script are text: German, French, Yoruba (precomposed or
// with combining dots and tones), Chinese.
func Problem(s string, max int) string {
	switch {
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "contains control characters"
	case utf8.RuneCountInString(s) > max:
		return fmt.Sprintf("is longer than %d characters", max)
	}
	return ""
}

// Reference is Problem for a payment's reference. It does not ask for one:
// the SDK requires a reference where the request needs it (and refuses a
// blank one there); the tracker reads an event without one as having none.
func Reference(s string) string { return Problem(s, MaxReference) }
