package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestString(t *testing.T) {
	const key = "sk_live_Qw3rTy8UiOp"
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain message", "Recipient not found", "Recipient not found"},
		{"secret", "key " + key + " is revoked", "key [redacted] is revoked"},
		{"secret twice", key + "/" + key, "[redacted]/[redacted]"},
		{"bearer any shape", `header "Authorization: Bearer abc.def-123" rejected`, `header "Authorization: Bearer [redacted]" rejected`},
		{"bearer lower case", "bearer xyz, then", "Bearer [redacted], then"},
		{"jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-nat_ure expired", "token [redacted] expired"},
		{"account number", "account 0123456789 closed", "account ****6789 closed"},
		{"bvn", "BVN 22233344455 mismatch", "BVN ****4455 mismatch"},
		{"grouped digits", "card 4111 1111 1111 1111 declined", "card ****1111 declined"},
		{"seven digits stay", "ref 1234567", "ref 1234567"},
		{"dates stay", "expired at 2025-03-01T10:05:00Z", "expired at 2025-03-01T10:05:00Z"},
		{"amounts stay", "limit 250000.00 exceeded", "limit 250000.00 exceeded"},
		{"uuid stays", "recipient 12345678-1234-4123-8123-123456789012 not found", "recipient 12345678-1234-4123-8123-123456789012 not found"},
		{"uuid upper case stays", "id 12345678-1234-4123-8123-12345678901A", "id 12345678-1234-4123-8123-12345678901A"},
		{"account beside a uuid", "12345678-1234-4123-8123-123456789012 pays 0123456789", "12345678-1234-4123-8123-123456789012 pays ****6789"},
		{"newline escaped", "bad\nlevel=ERROR msg=forged", `bad\nlevel=ERROR msg=forged`},
		{"ansi escaped", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"invalid utf8 replaced", "bad \xff\xfe byte", "bad \ufffd\ufffd byte"},
		{"bidi override escaped", "abc\u202edef", `abc\u202edef`},
		{"unicode text stays", "Zahlung über ₦5", "Zahlung über ₦5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, String(tc.in, nil, key))
		})
	}
}

func TestStringIgnoresShortOrEmptySecrets(t *testing.T) {
	// A secret of fewer than four characters would mask ordinary words.
	assert.Equal(t, "abc def", String("abc def", nil, "", "abc"))
}

func TestStringJWTKeyIsMaskedEvenIfNotGiven(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJtZXJjaGFudCI6NDJ9.c2lnbmF0dXJl"
	assert.NotContains(t, String("bad token "+jwt, nil), jwt)
}

func TestSecrets(t *testing.T) {
	const key = "sk_live_Qw3rTy8UiOp"
	assert.Equal(t, "", Secrets("", key))
	assert.Equal(t, "code [redacted]", Secrets("code "+key, key))
	assert.Equal(t, "E100200300", Secrets("E100200300", key), "digits are left alone")
	assert.Equal(t, "xyz", Secrets("xyz", "", "x"))
}

func TestStringKeepsTheStan(t *testing.T) {
	const stan = "000123456789"
	assert.Equal(t, "stan 000123456789 for account ****6789", String("stan "+stan+" for account 0123456789", []string{stan}))
	assert.Equal(t, "stan ****6789", String("stan "+stan, nil), "without keep it is a digit run like any other")
}

func TestClean(t *testing.T) {
	assert.Equal(t, "plain", Clean("plain"))
	assert.Equal(t, `a\r\nb\tc\x7f\u0085`, Clean("a\r\nb\tc\x7f\u0085"))
	assert.Equal(t, `code\u2028x`, Clean("code\u2028x"))
}

func TestSecretsCleans(t *testing.T) {
	assert.Equal(t, `E1\nE2`, Secrets("E1\nE2"))
}
