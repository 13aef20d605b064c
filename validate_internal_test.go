package payments

import (
	"net/mail"
	"strings"
	"testing"
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
