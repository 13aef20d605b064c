package textrule

import (
	"strings"
	"testing"
)

// The rule counts characters, not bytes, takes letters and marks of any
// script, and refuses control characters (C0, DEL, C1) and bytes that are
// not UTF-8.
func TestReference(t *testing.T) {
	for ref, want := range map[string]string{
		"":                          "",
		"order-1":                   "",
		"Zahlung-Müller-42":         "",
		"Café-Crème-7":              "",
		"Ọmọ-Ọba-9":                 "",
		"O\u0323mo\u0323-O\u0323ba": "",
		"付款-北京-42":                  "",
		strings.Repeat("付", 255):    "",
		strings.Repeat("付", 256):    "is longer than 255 characters",
		strings.Repeat("a", 256):    "is longer than 255 characters",
		"tab\t":                     "contains control characters",
		"nul\x00":                   "contains control characters",
		"del\x7f":                   "contains control characters",
		"nel\u0085":                 "contains control characters",
		"latin1-\xfc":               "is not valid UTF-8",
	} {
		if got := Reference(ref); got != want {
			t.Errorf("Reference(%q) = %q, want %q", ref, got, want)
		}
	}
}
