// Package redact masks secrets and personal data in text that the SDK did not
// write itself (messages from the service) before it reaches an error string
// or a log line.
package redact

import (
	"regexp"
	"strings"
)

var (
	// A JSON Web Token: three base64url segments, the first one starting
	// like an encoded JSON object.
	jwtPattern = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
	// A bearer credential of any shape.
	bearerPattern = regexp.MustCompile(`(?i)bearer\s+[^\s"',;]+`)
	// Eight or more digits, possibly grouped by single spaces: account
	// numbers, BVNs, identification numbers. Dates (2024-01-31) are left.
	digitsPattern = regexp.MustCompile(`\d(?: ?\d){7,}`)
)

// String returns s with the given secrets, anything shaped like a bearer
// token or JWT, and every run of eight or more digits masked. Digit runs keep
// their last four digits so that a person can still tell accounts apart.
func String(s string, secrets ...string) string {
	if s == "" {
		return s
	}
	s = Secrets(s, secrets...)
	s = bearerPattern.ReplaceAllString(s, "Bearer [redacted]")
	s = jwtPattern.ReplaceAllString(s, "[redacted]")
	return digitsPattern.ReplaceAllStringFunc(s, func(m string) string {
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, m)
		return "****" + digits[len(digits)-4:]
	})
}

// Secrets returns s with each of the given secrets (of four characters or
// more) masked, and nothing else changed: for values such as error codes and
// field names, whose digits must stay.
func Secrets(s string, secrets ...string) string {
	if s == "" {
		return s
	}
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}
