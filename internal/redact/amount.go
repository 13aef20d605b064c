package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// What tells an amount from an account number, a BVN or an identification
// number, when a run of eight or more digits shows in a message: money has
// decimals, a currency or a word that names it beside it. The rules are
// deliberately narrow, so that an account number in a sentence stays masked:
//
//   - a decimal number: the run is followed by "." and a digit (12345678.90),
//     or is the fraction after one (0.12345678);
//   - a currency beside it: an ISO 4217 code before or after it (NGN 12345678,
//     12345678 NGN) or a currency sign just before it (₦12345678, $ 12345678);
//   - a money word before it, as the last word or the last part of an
//     identifier (balance 12345678, total_amount: 12345678, "fee":12345678,
//     limit of 12345678), through spaces and : = ( " ' and the linking words
//     of, is, was, by, and a sign (balance: -12345678).
//
// An account number beside one of those (a "total" that is an account) is
// left whole; an amount without any (a bare 20300000) is masked.

// moneyWords name an amount. Words that also name accounts or people
// ("value", "credit", "account") are not among them.
var moneyWords = map[string]bool{
	"amount": true, "amounts": true, "balance": true, "balances": true, "total": true,
	"subtotal": true, "fee": true, "fees": true, "limit": true, "limits": true, "sum": true,
	"price": true, "cost": true, "costs": true, "charge": true, "charges": true,
}

// linkWords may stand between a money word and its number.
var linkWords = map[string]bool{"of": true, "is": true, "was": true, "by": true}

// currencyCodes are the active ISO 4217 codes. BVN, NIN and the like are not
// among them, so "BVN 22233344455" stays masked.
var currencyCodes = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF
		BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUC CUP CVE CZK DJF DKK DOP
		DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD
		IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA
		MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR
		PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL
		THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER
		ZAR ZMW ZWL`) {
		m[c] = true
	}
	return m
}()

// currencySigns stand just before an amount.
const currencySigns = "₦$€£¥₵₹₱₩₺₽₴"

// amountAt reports whether the digit run s[start:end] is an amount by the
// rules above.
func amountAt(s string, start, end int) bool {
	after, before := s[end:], s[:start]
	switch {
	case len(after) >= 2 && after[0] == '.' && isDigit(after[1]):
		return true
	case len(before) >= 2 && before[len(before)-1] == '.' && isDigit(before[len(before)-2]):
		return true
	}
	if w := leadingWord(strings.TrimLeft(after, " ")); currencyCodes[w] {
		return true
	}
	if r, _ := utf8.DecodeLastRuneInString(strings.TrimRight(before, " ")); strings.ContainsRune(currencySigns, r) {
		return true
	}
	for range 3 { // the money word, through at most two linking words
		before = strings.TrimRight(before, ` :=("'+-`)
		w := trailingWord(before)
		if w == "" {
			return false
		}
		if currencyCodes[w] || moneyWords[lastPart(w)] {
			return true
		}
		if !linkWords[strings.ToLower(w)] {
			return false
		}
		before = before[:len(before)-len(w)]
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-'
}

// trailingWord is the run of ASCII letters, '_' and '-' that ends s.
func trailingWord(s string) string {
	i := len(s)
	for i > 0 && isWordByte(s[i-1]) {
		i--
	}
	return strings.Trim(s[i:], "_-")
}

// leadingWord is the run of ASCII letters that starts s, when a non-letter
// (or the end) follows it.
func leadingWord(s string) string {
	i := 0
	for i < len(s) && unicode.IsLetter(rune(s[i])) && s[i] < utf8.RuneSelf {
		i++
	}
	if i < len(s) && s[i] >= utf8.RuneSelf {
		return "" // a longer word in another script
	}
	return s[:i]
}

// lastPart is the last part of an identifier, lower case: "amount" of
// "total_amount", "totalAmount" and "Total-Amount".
func lastPart(w string) string {
	if i := strings.LastIndexAny(w, "_-"); i >= 0 {
		w = w[i+1:]
	}
	for i := len(w) - 1; i > 0; i-- {
		if w[i] >= 'A' && w[i] <= 'Z' && w[i-1] >= 'a' && w[i-1] <= 'z' {
			w = w[i:]
			break
		}
	}
	return strings.ToLower(w)
}
