package redact

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

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

// The service's own refusal, which says how much to fund, reaches the
// merchant unchanged: its amounts have 8 integer digits and more.
func TestStringKeepsTheBalanceMessage(t *testing.T) {
	const msg = "the NGN balance (12345678.90) is less than the quote's total_amount (20300000.00)"
	assert.Equal(t, msg, String(msg, nil, "sk_live_Qw3rTy8UiOp"))
}

func TestStringKeepsAmountsMasksAccountNumbers(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"decimal", "amount 12345678.90 refused", "amount 12345678.90 refused"},
		{"decimal without a word", "got 987654321.5", "got 987654321.5"},
		{"fraction digits", "rate 0.123456789", "rate 0.123456789"},
		{"currency code before", "send NGN 25000000 now", "send NGN 25000000 now"},
		{"currency code after", "Transfer of 25000000 NGN to account 0123456789 failed", "Transfer of 25000000 NGN to account ****6789 failed"},
		{"currency sign", "pay ₦25000000 or $ 12345678", "pay ₦25000000 or $ 12345678"},
		{"money word", "balance 12345678 too low", "balance 12345678 too low"},
		{"money word with linking words", "the limit is of 50000000", "the limit is of 50000000"},
		{"identifier", "total_amount=20300000 and amountLimit: 50000000", "total_amount=20300000 and amountLimit: 50000000"},
		{"json member", `{"fee":12345678,"account_number":"0123456789"}`, `{"fee":12345678,"account_number":"****6789"}`},
		{"negative", "balance: -12345678", "balance: -12345678"},
		{"account in a sentence", "the account 0123456789 is closed", "the account ****6789 is closed"},
		{"account after a money word's sentence", "the balance of account 0123456789 is low", "the balance of account ****6789 is low"},
		{"account then full stop", "paid to 0123456789.", "paid to ****6789."},
		{"bvn is no currency", "BVN 22233344455 mismatch", "BVN ****4455 mismatch"},
		{"lower-case code is a word", "all 0123456789", "all ****6789"},
		{"bare big number", "reference 20300000", "reference ****0000"},
		{"words that are not money", "feedback 0123456789 summary 0123456789 value 0123456789", "feedback ****6789 summary ****6789 value ****6789"},
		{"iban-like", "IBAN GB82WEST12345698765432", "IBAN GB82WEST****5432"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, String(tc.in, nil))
		})
	}
}

// FuzzString: whatever text surrounds them, an account number after the word
// "account" is masked and an amount (a decimal, or beside a currency code or
// a money word) is kept; the result is valid UTF-8 on one line.
func FuzzString(f *testing.F) {
	f.Add("the NGN", "is less than the quote's", uint64(123456789012), uint64(12345678), uint8(90))
	f.Add("", "", uint64(0), uint64(0), uint8(0))
	f.Add("x\n\xff(", ")\u202e.", uint64(99999999), uint64(1<<40), uint8(7))
	f.Fuzz(func(t *testing.T, prefix, suffix string, acct, whole uint64, cents uint8) {
		noDigits := func(s string) string {
			return strings.Map(func(r rune) rune {
				if unicode.IsDigit(r) {
					return -1
				}
				return r
			}, s)
		}
		prefix, suffix = noDigits(prefix), noDigits(suffix)
		account := fmt.Sprintf("%010d", acct%100_000_000_000_000_000) // 10 to 17 digits
		decimal := fmt.Sprintf("%d.%02d", whole%1_000_000_000_000, cents%100)
		big := fmt.Sprintf("%d", 10_000_000+whole%1_000_000_000_000) // 8 digits or more
		msg := prefix + " account " + account + " has a balance of " + decimal + ", total " + big +
			" and NGN " + big + " " + suffix
		out := String(msg, nil)
		if strings.Contains(out, account) {
			t.Fatalf("account number %s not masked: %q", account, out)
		}
		if !strings.Contains(out, "****"+account[len(account)-4:]) {
			t.Fatalf("account number %s lost its last four digits: %q", account, out)
		}
		for _, amount := range []string{" " + decimal + ",", "total " + big + " ", "NGN " + big + " "} {
			if !strings.Contains(out, amount) {
				t.Fatalf("amount %q masked: %q", amount, out)
			}
		}
		if !utf8.ValidString(out) || strings.ContainsAny(out, "\n\r") {
			t.Fatalf("not one line of valid UTF-8: %q", out)
		}
	})
}

// Clean leaves printable ASCII as it is (its fast path) and escapes every
// other ASCII byte, DEL included, wherever it stands.
func TestCleanASCII(t *testing.T) {
	for c := range 0x80 {
		s := "stan-" + string(rune(c)) + "-1"
		printable := c >= 0x20 && c < 0x7f
		assert.Equal(t, printable, Clean(s) == s, "byte %#x", c)
		assert.Equal(t, printable, Clean(string(rune(c))) == string(rune(c)), "byte %#x alone", c)
	}
}
