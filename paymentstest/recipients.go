package paymentstest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	payments "github.com/paymentsapi/payments-go"
)

// recipientJSON is a recipient as the server sends it.
type recipientJSON struct {
	ID                 string              `json:"id"`
	MerchantID         string              `json:"merchant_id"`
	AccountNumber      string              `json:"account_number"`
	AccountName        string              `json:"account_name"`
	AccountType        string              `json:"account_type"`
	IsInternalAccount  bool                `json:"is_internal_account"`
	AccountCurrency    string              `json:"account_currency"`
	AccountBankName    string              `json:"account_bank_name"`
	AccountBankCode    string              `json:"account_bank_code"`
	AccountCountryCode string              `json:"account_country_code"`
	AccountCountry     string              `json:"account_country"`
	Identification     *identificationJSON `json:"identification"`
	Limit              *string             `json:"limit"`
	PaymentDetails     *paymentDetails     `json:"payment_details"`
	CreatedAt          string              `json:"created_at"`
	UpdatedAt          string              `json:"updated_at"`
	// Reference is set only in triggered test events (see sample).
	Reference string `json:"reference,omitempty"`
}

// identificationJSON leaves the document image out of responses.
type identificationJSON struct {
	Type   string `json:"identification_type,omitempty"`
	Number string `json:"identification_number,omitempty"`
}

func (r *recipient) json() recipientJSON {
	out := recipientJSON{
		ID: r.ID, MerchantID: r.MerchantID, AccountNumber: r.AccountNumber, AccountName: r.AccountName,
		AccountType: r.AccountType, IsInternalAccount: r.IsInternalAccount, AccountCurrency: r.AccountCurrency,
		AccountBankName: r.AccountBankName, AccountBankCode: r.AccountBankCode,
		AccountCountryCode: r.AccountCountryCode, AccountCountry: r.AccountCountry,
		PaymentDetails: r.PaymentDetails, CreatedAt: stamp(r.CreatedAt), UpdatedAt: stamp(r.UpdatedAt),
	}
	if id := r.Identification; id != nil {
		out.Identification = &identificationJSON{Type: id.Type, Number: id.Number}
	}
	if r.Limit != nil {
		l := money(*r.Limit)
		out.Limit = &l
	}
	return out
}

// countries maps the country codes the fake knows to their names; any other
// code or name is kept as given.
var countries = map[string]string{
	"NG": "Nigeria", "GH": "Ghana", "KE": "Kenya", "ZA": "South Africa", "UG": "Uganda",
	"RW": "Rwanda", "EG": "Egypt", "US": "United States", "GB": "United Kingdom",
	"CA": "Canada", "DE": "Germany", "FR": "France",
}

// resolveCountry reads account_country_code, which takes a code or a name.
func resolveCountry(in string) (code, name string) {
	in = strings.TrimSpace(in)
	if n, ok := countries[strings.ToUpper(in)]; ok {
		return strings.ToUpper(in), n
	}
	for c, n := range countries {
		if strings.EqualFold(n, in) {
			return c, n
		}
	}
	return in, ""
}

func readIdentification(o *object, id *identification) {
	if o.present("identification_type") {
		id.Type = o.text("identification_type", maxCodeLen)
	}
	if o.present("identification_number") {
		id.Number = o.text("identification_number", maxCodeLen)
	}
	if o.present("identification_image") {
		img := o.str("identification_image")
		if _, err := base64.StdEncoding.DecodeString(img); err != nil {
			o.p.add(o.name("identification_image"), "must be standard Base64")
		}
		id.Image = img
	}
}

func readPaymentDetails(o *object, pd *paymentDetails) {
	set := func(field string, dst *string, max int) {
		if o.present(field) {
			*dst = o.text(field, max)
		}
	}
	set("account_number", &pd.AccountNumber, maxCodeLen)
	o.p.accountNumber(o.name("account_number"), pd.AccountNumber)
	set("bank_code", &pd.BankCode, maxCodeLen)
	set("bank_name", &pd.BankName, maxNameLen)
	set("routing_number", &pd.RoutingNumber, maxCodeLen)
	set("swift_code", &pd.SwiftCode, maxCodeLen)
	set("payment_rails", &pd.PaymentRails, maxCodeLen)
}

// createRecipient is POST /payments/recipients.
func (s *Server) createRecipient(rq *apiRequest) *response {
	var p problems
	o, err := parseObject(rq.body, &p, &rq.notes)
	if err != nil {
		return s.fail(http.StatusBadRequest, payments.CodeInvalidJSON, err.Error())
	}
	r := &recipient{MerchantID: s.merchantID}
	r.AccountNumber = o.required("account_number", maxNameLen)
	p.recipientAccountNumber("account_number", r.AccountNumber)
	r.AccountName = o.required("account_name", maxNameLen)
	r.AccountType = o.required("account_type", maxCodeLen)
	p.oneOf("account_type", r.AccountType, "individual", "business")
	r.AccountCurrency = o.required("account_currency", maxCodeLen)
	p.currency("account_currency", r.AccountCurrency)
	if o.present("account_country_code") {
		r.AccountCountryCode, r.AccountCountry = resolveCountry(o.text("account_country_code", maxNameLen))
	}
	r.AccountBankName = o.text("account_bank_name", maxNameLen)
	r.AccountBankCode = o.text("account_bank_code", maxCodeLen)
	if d, ok := o.amount("amount_limit"); ok {
		r.Limit = &d
	}
	if c := o.child("identification"); c != nil {
		r.Identification = new(identification)
		readIdentification(c, r.Identification)
	}
	if c := o.child("payment_details"); c != nil {
		r.PaymentDetails = new(paymentDetails)
		readPaymentDetails(c, r.PaymentDetails)
	}
	if len(p) > 0 {
		return s.invalid(p)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.now()
	r.ID, r.CreatedAt, r.UpdatedAt = s.ids.uuid(), now, now
	r.IsInternalAccount = s.st.accountByNumber[r.AccountNumber] != nil
	data, err := json.Marshal(r.json())
	if err != nil {
		return s.internal(err)
	}
	s.st.recipients = append(s.st.recipients, r)
	s.st.recipientByID[r.ID] = r
	s.emit(payments.EventRecipientCreated, data)
	s.verify(r, data)
	return s.ok(http.StatusCreated, "Recipient created successfully", data)
}

// updateRecipient is PUT /payments/recipients/{id}. Fields left out keep
// their value; amount_limit null removes the limit.
func (s *Server) updateRecipient(rq *apiRequest) *response {
	var p problems
	p.uuid("id", rq.param)
	if len(p) > 0 {
		return s.invalid(p)
	}
	o, err := parseObject(rq.body, &p, &rq.notes)
	if err != nil {
		return s.fail(http.StatusBadRequest, payments.CodeInvalidJSON, err.Error())
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.st.recipientByID[rq.param]
	if !ok {
		return s.notFound("recipient " + rq.param)
	}
	r := *cur // apply to a copy: nothing changes unless every field is valid
	before := cur.AccountNumber
	if o.present("account_number") {
		r.AccountNumber = o.required("account_number", maxNameLen)
		p.recipientAccountNumber("account_number", r.AccountNumber)
	}
	if o.present("account_name") {
		r.AccountName = o.required("account_name", maxNameLen)
	}
	if o.present("account_type") {
		r.AccountType = o.required("account_type", maxCodeLen)
		p.oneOf("account_type", r.AccountType, "individual", "business")
	}
	if o.present("account_currency") {
		r.AccountCurrency = o.required("account_currency", maxCodeLen)
		p.currency("account_currency", r.AccountCurrency)
	}
	if o.present("account_country_code") {
		r.AccountCountryCode, r.AccountCountry = resolveCountry(o.text("account_country_code", maxNameLen))
	}
	if o.present("account_bank_name") {
		r.AccountBankName = o.text("account_bank_name", maxNameLen)
	}
	if o.present("account_bank_code") {
		r.AccountBankCode = o.text("account_bank_code", maxCodeLen)
	}
	if raw, ok := o.m["amount_limit"]; ok && isNull(raw) {
		r.Limit = nil
	} else if d, ok := o.amount("amount_limit"); ok {
		r.Limit = &d
	}
	if o.present("identification_type") || o.present("identification_number") {
		id := identification{}
		if r.Identification != nil {
			id = *r.Identification
		}
		readIdentification(o, &id)
		r.Identification = &id
	}
	if c := o.child("payment_details"); c != nil {
		pd := paymentDetails{}
		if r.PaymentDetails != nil {
			pd = *r.PaymentDetails
		}
		readPaymentDetails(c, &pd)
		r.PaymentDetails = &pd
	}
	if len(p) > 0 {
		return s.invalid(p)
	}
	r.UpdatedAt = s.clock.now()
	r.IsInternalAccount = s.st.accountByNumber[r.AccountNumber] != nil
	data, err := json.Marshal(r.json())
	if err != nil {
		return s.internal(err)
	}
	*cur = r
	if cur.AccountNumber != before {
		s.verify(cur, data) // a new account number is verified again
	}
	return s.ok(http.StatusOK, "Recipient updated successfully", data)
}
