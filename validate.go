package payments

import (
	"encoding/base64"
	"fmt"
	"net/mail"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsapi/payments-go/internal/textrule"
)

// Bounds the SDK enforces where the specification publishes none. They are
// generous: their purpose is to stop a request that no service would accept,
// before it leaves.
const (
	maxNameLen       = 255
	maxTextLen       = 1024
	maxCodeLen       = 64
	maxAccountNumLen = 34 // the longest IBAN
	maxAmountScale   = 18
	maxImageBytes    = 10 << 20 // Base64 text of an identification image
	maxEventTypeLen  = 128
	maxQuoteIDLen    = 255
	maxPathIDLen     = 36
)

var maxAmount = decimal.New(1, 18)

// The formats of codes and numbers, checked byte by byte: a regexp match
// cost each call 0.1 to 0.3 µs. TestFormatsAgreeWithTheirPatterns holds
// each to the regular expression in its comment.

// isCurrency: ^[A-Z]{3}$.
func isCurrency(s string) bool {
	return len(s) == 3 && isUpper(s[0]) && isUpper(s[1]) && isUpper(s[2])
}

// isAccountNumber: ^[A-Za-z0-9][A-Za-z0-9 -]*$.
func isAccountNumber(s string) bool {
	if s == "" || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != ' ' && c != '-' {
			return false
		}
	}
	return true
}

// isBVN: ^[0-9]{11}$.
func isBVN(s string) bool {
	if len(s) != 11 {
		return false
	}
	for i := range len(s) {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// isMobileNumber: ^\+?[0-9][0-9 ()-]{5,19}$.
func isMobileNumber(s string) bool {
	if s != "" && s[0] == '+' {
		s = s[1:]
	}
	if len(s) < 6 || len(s) > 20 || !isDigit(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c), c == ' ', c == '(', c == ')', c == '-':
		default:
			return false
		}
	}
	return true
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool { return isDigit(c) || isUpper(c) || ('a' <= c && c <= 'z') }

// validator collects every problem before reporting them together.
type validator struct{ fields []FieldError }

func (v *validator) add(field, msg string) { v.fields = append(v.fields, FieldError{field, msg}) }

func (v *validator) err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return &ValidationError{Fields: v.fields}
}

// text checks an optional free-text field: valid UTF-8, no control
// characters, at most max characters (internal/textrule: the rule the outcome tracker applies to a
// payment's reference too).
func (v *validator) text(field, s string, max int) {
	if problem := textrule.Problem(s, max); problem != "" {
		v.add(field, problem)
	}
}

func (v *validator) required(field, s string, max int) {
	if strings.TrimSpace(s) == "" {
		v.add(field, "is required")
		return
	}
	v.text(field, s, max)
}

func (v *validator) currency(field, s string, required bool) {
	if s == "" && !required {
		return
	}
	if !isCurrency(s) {
		v.add(field, "must be a three-letter ISO 4217 code in capitals, such as NGN or USD")
	}
}

func (v *validator) accountType(field string, t AccountType, required bool) {
	if t == "" && !required {
		return
	}
	if !knownAccountType(t) {
		v.add(field, `must be "individual" or "business"`)
	}
}

func (v *validator) accountNumber(field, s string, required bool) {
	if s == "" && !required {
		return
	}
	switch {
	case s == "":
		v.add(field, "is required")
	case len(s) > maxAccountNumLen:
		v.add(field, fmt.Sprintf("is longer than %d characters", maxAccountNumLen))
	case !isAccountNumber(s):
		v.add(field, "may contain only letters, digits, spaces and dashes")
	}
}

func (v *validator) uuid(field, s string) {
	if s == "" {
		v.add(field, "is required")
		return
	}
	if len(s) != maxPathIDLen || uuid.Validate(s) != nil {
		v.add(field, "must be a UUID such as 3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11")
	}
}

// amount checks a money amount: positive, below 10^18, and at most 18
// decimal places.
func (v *validator) amount(field string, d decimal.Decimal) {
	switch {
	case !d.IsPositive():
		v.add(field, "must be greater than zero")
	case atLeastMaxAmount(d):
		v.add(field, "must be less than 10^18")
	case -int64(d.Exponent()) > maxAmountScale && decimalPlaces(d) > maxAmountScale:
		// decimalPlaces (which allocates) runs only when the representation
		// has more places than allowed: it never counts more than it has.
		v.add(field, fmt.Sprintf("has more than %d decimal places", maxAmountScale))
	}
}

// atLeastMaxAmount reports whether d, positive, is at least maxAmount
// (10^18), from its digits, without the multiplication of d.Cmp (an
// allocation and about a tenth of Initiate's validation): a coefficient of
// k digits times 10^e is below 10^(k+e) and at least 10^(k-1+e).
// TestAtLeastMaxAmountIsCmp holds it to d.Cmp(maxAmount) >= 0.
func atLeastMaxAmount(d decimal.Decimal) bool {
	return int64(d.NumDigits())+int64(d.Exponent()) > 18
}

// decimalPlaces counts the decimal places of d's value, as d.String() (what
// is sent) writes it: trailing zeros of its representation do not count, so
// 100 held as 100.00000000000000000000 (the product of two amounts with ten
// places each, say) has none.
func decimalPlaces(d decimal.Decimal) int64 {
	exp := int64(d.Exponent())
	if exp >= 0 {
		return 0
	}
	digits := d.Coefficient().String()
	zeros := int64(len(digits) - len(strings.TrimRight(digits, "0")))
	return max(-exp-zeros, 0)
}

func (v *validator) identification(id *Identification) {
	if id == nil {
		return
	}
	v.text("identification.identification_type", string(id.Type), maxCodeLen)
	v.text("identification.identification_number", string(id.Number), maxCodeLen)
	if id.Image == "" {
		return
	}
	if len(id.Image) > maxImageBytes {
		v.add("identification.identification_image", fmt.Sprintf("is larger than %d bytes", maxImageBytes))
	} else if _, err := base64.StdEncoding.DecodeString(string(id.Image)); err != nil {
		v.add("identification.identification_image", "is not valid standard Base64")
	}
}

func (v *validator) paymentDetails(pd *PaymentDetails) {
	if pd == nil {
		return
	}
	v.accountNumber("payment_details.account_number", string(pd.AccountNumber), false)
	v.text("payment_details.bank_code", pd.BankCode, maxCodeLen)
	v.text("payment_details.bank_name", pd.BankName, maxNameLen)
	v.text("payment_details.routing_number", pd.RoutingNumber, maxCodeLen)
	v.text("payment_details.swift_code", pd.SwiftCode, maxCodeLen)
	v.text("payment_details.payment_rails", pd.PaymentRails, maxCodeLen)
}

func nilParams() error {
	return &ValidationError{Fields: []FieldError{{Field: "params", Message: "must not be nil"}}}
}

// accountFields are the account fields a recipient's create and update
// params share.
type accountFields struct {
	number      string
	typ         AccountType
	currency    string
	countryCode string
	bankName    string
	bankCode    string
	limit       *Amount
}

// account checks the shared account fields; required says whether number,
// type and currency must be set (create) or may be left out (update).
func (v *validator) account(a accountFields, required bool) {
	v.accountNumber("account_number", a.number, required)
	v.accountType("account_type", a.typ, required)
	v.currency("account_currency", a.currency, required)
	v.text("account_country_code", a.countryCode, maxCodeLen)
	v.text("account_bank_name", a.bankName, maxNameLen)
	v.text("account_bank_code", a.bankCode, maxCodeLen)
	if a.limit != nil {
		v.amount("amount_limit", a.limit.Decimal)
	}
}

func (p *RecipientCreateParams) validate() error {
	if p == nil {
		return nilParams()
	}
	var v validator
	v.required("account_name", p.AccountName, maxNameLen)
	v.account(accountFields{string(p.AccountNumber), p.AccountType, p.AccountCurrency, p.AccountCountryCode,
		p.AccountBankName, p.AccountBankCode, p.AmountLimit}, true)
	v.identification(p.Identification)
	v.paymentDetails(p.PaymentDetails)
	return v.err()
}

func (p *RecipientUpdateParams) validate(id string) error {
	if p == nil {
		return nilParams()
	}
	var v validator
	v.uuid("id", id)
	if *p == (RecipientUpdateParams{}) {
		v.add("params", "set at least one field to update")
	}
	v.text("account_name", p.AccountName, maxNameLen)
	v.account(accountFields{string(p.AccountNumber), p.AccountType, p.AccountCurrency, p.AccountCountryCode,
		p.AccountBankName, p.AccountBankCode, p.AmountLimit}, false)
	v.text("identification_type", string(p.IdentificationType), maxCodeLen)
	v.text("identification_number", string(p.IdentificationNumber), maxCodeLen)
	v.paymentDetails(p.PaymentDetails)
	return v.err()
}

func (p *PaymentInitiateParams) validate() error {
	if p == nil {
		return nilParams()
	}
	var v validator
	v.amount("amount", p.Amount.Decimal)
	v.currency("currency", p.Currency, true)
	v.uuid("recipient_id", p.RecipientID)
	v.required("reference", p.Reference, textrule.MaxReference)
	v.text("description", p.Description, maxTextLen)
	v.text("transaction_type", p.TransactionType, maxCodeLen)
	v.text("transaction_category", p.TransactionCategory, maxCodeLen)
	v.text("transaction_tags", p.TransactionTags, maxTextLen)
	v.text("transaction_notes", p.TransactionNotes, maxTextLen)
	v.text("channel", p.Channel, maxCodeLen)
	v.text("sub_type", p.SubType, maxCodeLen)
	return v.err()
}

func (p *PaymentConfirmParams) validate() error {
	if p == nil {
		return nilParams()
	}
	var v validator
	v.required("reference", p.Reference, textrule.MaxReference)
	v.required("quote_id", p.QuoteID, maxQuoteIDLen)
	return v.err()
}

// isNigerian reports whether a country value names Nigeria.
func isNigerian(country string) bool {
	switch strings.ToUpper(strings.TrimSpace(country)) {
	case "NG", "NGA", "NIGERIA":
		return true
	}
	return false
}

// validEmail reports whether s is a bare address that net/mail reads as
// itself, at most 254 bytes. The usual address (letters, digits, "._+-"
// in dot-separated parts, one "@") is checked without net/mail, which
// allocates five times per call; anything else goes to mail.ParseAddress.
// TestValidEmailAgreesWithNetMail keeps the two in agreement.
func validEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	if local, domain, ok := strings.Cut(s, "@"); ok && plainDotAtom(local, true) && plainDotAtom(domain, false) {
		return true
	}
	addr, err := mail.ParseAddress(s)
	return err == nil && addr.Address == s
}

// plainDotAtom: s is non-empty parts of letters, digits, "-" and (in a
// local part) "_" and "+", joined by single dots.
func plainDotAtom(s string, local bool) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9', b == '.', b == '-':
		case local && (b == '_' || b == '+'):
		default:
			return false
		}
	}
	return true
}

func (p *VirtualAccountCreateParams) validate() error {
	if p == nil {
		return nilParams()
	}
	var v validator
	v.accountType("account_type", p.AccountType, true)
	v.required("account_name", p.AccountName, maxNameLen)
	if email := string(p.Email); email == "" {
		v.add("email", "is required")
	} else if !validEmail(email) {
		v.add("email", "is not a valid email address")
	}
	if p.AccountType == AccountTypeIndividual {
		v.required("first_name", p.FirstName, maxNameLen)
		v.required("last_name", p.LastName, maxNameLen)
	} else {
		v.text("first_name", p.FirstName, maxNameLen)
		v.text("last_name", p.LastName, maxNameLen)
	}
	v.text("display_name", p.DisplayName, maxNameLen)
	switch {
	case p.BVN != "" && !isBVN(string(p.BVN)):
		v.add("bvn", "must be exactly 11 digits")
	case p.BVN == "" && p.Metadata != nil && isNigerian(p.Metadata.Country):
		v.add("bvn", "is required for Nigerian accounts")
	}
	if p.MobileNumber != "" && !isMobileNumber(string(p.MobileNumber)) {
		v.add("mobile_number", "is not a phone number")
	}
	if m := p.Metadata; m != nil {
		v.text("metadata.business_reg_number", m.BusinessRegNumber, maxCodeLen)
		v.text("metadata.country", m.Country, maxCodeLen)
		v.text("metadata.use_case", m.UseCase, maxTextLen)
		v.text("metadata.reference", m.Reference, maxNameLen)
	}
	return v.err()
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// requestOptions applies opts and checks the result: every problem is
// reported at once, and nothing is sent.
func requestOptions(opts []RequestOption) (requestConfig, error) {
	if len(opts) == 0 {
		return requestConfig{}, nil
	}
	var rc requestConfig
	for _, o := range opts {
		o.applyRequest(&rc)
	}
	var v validator
	switch k := rc.idempotencyKey; {
	case rc.keyGiven && strings.TrimSpace(k) == "":
		v.add("Idempotency-Key", "is empty: pass the stored key of the call to repeat, or leave WithIdempotencyKey out for a new one")
	case len(k) > 255 || !printableASCII(k):
		v.add("Idempotency-Key", "must be at most 255 printable ASCII characters")
	}
	if rc.retryErr != "" {
		v.add("WithRetries", rc.retryErr)
	}
	checkBodyFields(&v, rc.bodyFields)
	for name, values := range rc.header {
		if ownedHeaders[name] || !validHeaderName(name) {
			v.add("header "+name, "cannot be set with WithHeader")
		}
		for _, val := range values {
			if strings.ContainsAny(val, "\r\n\x00") {
				v.add("header "+name, "value contains a line break")
			}
		}
	}
	return rc, v.err()
}
