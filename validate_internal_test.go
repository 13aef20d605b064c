package payments

import (
	"math/rand/v2"
	"net/mail"
	"regexp"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// netMailEmail is what validEmail was before its fast path: net/mail alone.
func netMailEmail(s string) bool {
	addr, err := mail.ParseAddress(s)
	return err == nil && addr.Address == s && len(s) <= 254
}

var emailCases = []string{
	"ada@example.com", "ada.okafor+ng@mail.example.co.uk", "a_b-c@x-y.z", "A9@B9", "ada@localhost",
	"", "@", "ada@", "@example.com", "ada.example.com", "ada@@example.com", "a@b@c",
	".ada@example.com", "ada.@example.com", "a..da@example.com", "ada@.example.com", "ada@example.com.", "ada@exa..mple.com",
	"ada@exa_mple.com", "ada@exa+mple.com", "Ada <ada@example.com>", " ada@example.com", "ada@example.com ",
	`"ada okafor"@example.com`, "ada@[127.0.0.1]", "ada!#$%&'*/=?^`{|}~@example.com", "adé@example.com", "ada@exämple.com",
	"ada@example.com\n", "ada(comment)@example.com", strings.Repeat("a", 243) + "@example.com", strings.Repeat("a", 242) + "@example.com",
}

// The fast path of validEmail accepts and refuses exactly what net/mail
// does: the same answer as netMailEmail on every case above.
func TestValidEmailAgreesWithNetMail(t *testing.T) {
	for _, s := range emailCases {
		if got, want := validEmail(s), netMailEmail(s); got != want {
			t.Errorf("validEmail(%q) = %v, net/mail says %v", s, got, want)
		}
	}
}

func FuzzValidEmail(f *testing.F) {
	for _, s := range emailCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validEmail(s), netMailEmail(s); got != want {
			t.Errorf("validEmail(%q) = %v, net/mail says %v", s, got, want)
		}
	})
}

// The byte-by-byte format checks of validate.go accept and refuse exactly
// what the regular expressions they replaced do: on a list of cases, and on
// every string of up to 4 bytes over an alphabet of the characters the
// patterns treat apart, and random longer ones.
func TestFormatsAgreeWithTheirPatterns(t *testing.T) {
	checks := []struct {
		name    string
		fast    func(string) bool
		pattern *regexp.Regexp
	}{
		{"isCurrency", isCurrency, regexp.MustCompile(`^[A-Z]{3}$`)},
		{"isAccountNumber", isAccountNumber, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 -]*$`)},
		{"isBVN", isBVN, regexp.MustCompile(`^[0-9]{11}$`)},
		{"isMobileNumber", isMobileNumber, regexp.MustCompile(`^\+?[0-9][0-9 ()-]{5,19}$`)},
	}
	cases := []string{"", "NGN", "ngn", "NG", "NGNN", "N1N", "0123456789", "GB82 WEST-1234", " 01", "-01", "01\n", "0é1",
		"12345678901", "1234567890", "123456789012", "+2348012345678", "+234 (801) 234-5678", "++234801234", "+(234)801",
		"080123", "08012", "+" + strings.Repeat("1", 20), strings.Repeat("1", 20), strings.Repeat("1", 21), "0801234567\x00"}
	alphabet := []byte("aZ09 -()+_\xc3")
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		cases = append(cases, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+string(c), n-1)
		}
	}
	gen("", 4)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, 5+rng.IntN(18))
		for i := range b {
			b[i] = "0123456789 ()-+Aa"[rng.IntN(17)]
		}
		cases = append(cases, string(b))
	}
	for _, c := range checks {
		for _, s := range cases {
			if got, want := c.fast(s), c.pattern.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, the pattern says %v", c.name, s, got, want)
			}
		}
	}
}

// TestAtLeastMaxAmountIsCmp: the validation's bound read from the digits is
// d.Cmp(maxAmount) >= 0, for positive amounts of every size and scale and
// around 10^18 itself.
func TestAtLeastMaxAmountIsCmp(t *testing.T) {
	check := func(d decimal.Decimal) {
		t.Helper()
		if got, want := atLeastMaxAmount(d), d.Cmp(maxAmount) >= 0; got != want {
			t.Fatalf("atLeastMaxAmount(%s) = %v, Cmp says %v", d, got, want)
		}
	}
	for _, s := range []string{"1", "0.01", "999999999999999999", "999999999999999999.999999", "1000000000000000000",
		"1000000000000000000.00", "1000000000000000000.0001", "1e18", "0.1e19", "10e17", "9.99e17", "1e19", "123456789012345678901234567890"} {
		check(decimal.RequireFromString(s))
	}
	rng := rand.New(rand.NewPCG(48, 2))
	for range 200000 {
		coef := rng.Int64N(1<<62) + 1
		switch rng.IntN(3) {
		case 0:
			coef = rng.Int64N(1000) + 1
		case 1: // a power of ten, or one less
			coef = 1
			for range rng.IntN(19) {
				coef *= 10
			}
			coef -= int64(rng.IntN(2)) * min(coef-1, 1)
		}
		d := decimal.New(coef, int32(rng.IntN(60)-30))
		if rng.IntN(5) == 0 { // a coefficient beyond int64
			d = d.Mul(decimal.New(rng.Int64N(1<<62)+1, 0))
		}
		check(d)
	}
}

// BenchmarkAmountBound is the 10^18 bound of an amount with two places
// checked by decimal.Cmp (how=cmp) and from its digits (how=digits).
func BenchmarkAmountBound(b *testing.B) {
	d := decimal.RequireFromString("15000.50")
	for _, how := range []string{"cmp", "digits"} {
		b.Run("how="+how, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if how == "cmp" && d.Cmp(maxAmount) >= 0 || how == "digits" && atLeastMaxAmount(d) {
					b.Fatal(d)
				}
			}
		})
	}
}
