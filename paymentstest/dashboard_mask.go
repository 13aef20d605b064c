package paymentstest

import (
	"cmp"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"

	payments "github.com/paymentsapi/payments-go"
)

// The dashboard shows no personal data whole: it masks every field that the
// SDK masks where it prints or logs one (a payments.AccountNumber keeps its
// last four characters, a payments.PersonalData is hidden entirely, a
// payer's narration keeps its digits' last four), in every view, twice
// over:
//
//   - a JSON body (an event's body sent) is masked by member name
//     (accountMembers, hiddenMembers, narrationMembers), so that a value
//     the server no longer holds (a recipient's former account number in
//     an old event) is masked too, and any other string of 6 or more
//     digits keeps only its last four;
//   - then every text of the page's view (the bodies sent, the receiver's
//     answers and response headers, errors, notices) has each personal
//     value the server knows (its store, and the masked members of its
//     events) replaced by its mask: an endpoint that echoes the body it
//     got shows it masked.
//
// TestDashboardMasksEveryPersonalField fills every personal field of the
// SDK's types with a marker and looks for each on every view.

// accountMembers are the JSON members that hold an account number: the
// SDK's AccountNumber fields (recipients, payment details, virtual accounts)
// and the names it reads a received payment's numbers from.
var accountMembers = map[string]bool{
	"account_number":            true,
	"virtual_account_number":    true,
	"payer_account_number":      true,
	"sender_account_number":     true,
	"originator_account_number": true,
}

// hiddenMembers are the JSON members that hold the SDK's PersonalData: an
// identification number and image, a BVN, an email address, a mobile
// number.
var hiddenMembers = map[string]bool{
	"identification_number": true,
	"identification_image":  true,
	"bvn":                   true,
	"email":                 true,
	"mobile_number":         true,
}

// narrationMembers are the JSON members of free text that a payer writes,
// where an account number may be quoted: the SDK masks their digit runs.
var narrationMembers = map[string]bool{"description": true, "narration": true, "remark": true}

// minScrubbed is the length below which a personal value is not looked for
// in free text: a shorter one could match inside an id or a time.
const minScrubbed = 6

var (
	// digitRun is a string that is all digits, 6 or more: an account
	// number, a BVN.
	digitRun = regexp.MustCompile(`^[0-9]{6,}$`)
	// narrationDigits are eight or more digits, possibly grouped by single
	// spaces, in a narration (the SDK's rule).
	narrationDigits = regexp.MustCompile(`[0-9](?: ?[0-9]){7,}`)
)

// personalSet is the personal values a view may show, each with its mask.
type personalSet map[string]string

// account adds an account number.
func (p personalSet) account(n string) {
	if n != "" {
		p[n] = maskAccount(n)
	}
}

// hidden adds a value that is hidden entirely.
func (p personalSet) hidden(v string) {
	if v != "" {
		p[v] = hide(v)
	}
}

// hide is a personal value as the SDK prints it: "[redacted]".
func hide(v string) string { return payments.PersonalData(v).String() }

// addRecipient adds a recipient's account numbers and identification.
func (p personalSet) addRecipient(r *recipient) {
	p.account(r.AccountNumber)
	if id := r.Identification; id != nil {
		p.hidden(id.Number)
		p.hidden(id.Image)
	}
	if pd := r.PaymentDetails; pd != nil {
		p.account(pd.AccountNumber)
	}
}

// addAccount adds a virtual account's number and its holder's personal
// data.
func (p personalSet) addAccount(va *virtualAccount) {
	p.account(va.AccountNumber)
	p.hidden(va.Email)
	p.hidden(va.BVN)
	p.hidden(va.Mobile)
}

// scrub replaces every personal value of p (the longest first) in every
// string of the view v points to, but the form token.
func (p personalSet) scrub(v any) {
	var values []string
	for value := range p {
		if len(value) >= minScrubbed {
			values = append(values, value)
		}
	}
	slices.SortFunc(values, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	var pairs []string
	for _, value := range values {
		pairs = append(pairs, value, p[value])
	}
	if len(pairs) == 0 {
		return
	}
	scrubStrings(reflect.ValueOf(v), strings.NewReplacer(pairs...))
}

// scrubStrings replaces in every settable string reachable from v through
// pointers, structs and slices, but a field named Token.
func scrubStrings(v reflect.Value, r *strings.Replacer) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			scrubStrings(v.Elem(), r)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).Name != "Token" {
				scrubStrings(v.Field(i), r)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			scrubStrings(v.Index(i), r)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(r.Replace(v.String()))
		}
	}
}

// shownBody is a JSON body as the page shows it: indented, masked by
// maskMember, the values it masked added to p. A body that is not JSON
// gives "".
func shownBody(body []byte, p personalSet) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return ""
	}
	out, err := json.MarshalIndent(maskJSON("", v, p), "", "  ")
	if err != nil {
		return ""
	}
	return string(out)
}

// maskJSON masks a decoded JSON value found under member.
func maskJSON(member string, v any, p personalSet) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = maskJSON(k, x, p)
		}
	case []any:
		for i, x := range t {
			t[i] = maskJSON(member, x, p)
		}
	case json.Number: // an account number sent as a number is masked all the same
		if accountMembers[member] || hiddenMembers[member] {
			return maskMember(member, t.String(), p)
		}
	case string:
		return maskMember(member, t, p)
	}
	return v
}

// maskMember masks the string s of a JSON member, and adds what it masked
// whole to p.
func maskMember(member, s string, p personalSet) string {
	switch {
	case s == "":
		return s
	case accountMembers[member]:
		p.account(s)
		return maskAccount(s)
	case hiddenMembers[member]:
		p.hidden(s)
		return hide(s)
	case narrationMembers[member]:
		return narrationDigits.ReplaceAllStringFunc(s, func(run string) string {
			return maskAccount(strings.ReplaceAll(run, " ", ""))
		})
	case digitRun.MatchString(s):
		p.account(s)
		return maskAccount(s)
	}
	return s
}

// maskAccount shows the last 4 characters of an account number.
func maskAccount(n string) string {
	r := []rune(n)
	if len(r) <= 4 {
		return "••••"
	}
	return "••••" + string(r[len(r)-4:])
}
