package paymentstest

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"

	payments "github.com/paymentsapi/payments-go"
	"github.com/shopspring/decimal"
)

// sandboxBankName is the bank_name of every virtual account the fake opens.
const sandboxBankName = "Payments Sandbox Bank"

type virtualAccountJSON struct {
	ID            string `json:"id"`
	Currency      string `json:"currency"`
	AccountNumber string `json:"account_number"`
	AccountName   string `json:"account_name"`
	BankName      string `json:"bank_name"`
	IsActive      bool   `json:"is_active"`
	CreatedAt     string `json:"created_at"`
	// Reference is set only in triggered test events (see sample).
	Reference string `json:"reference,omitempty"`
}

func (va *virtualAccount) json() virtualAccountJSON {
	return virtualAccountJSON{
		ID: va.ID, Currency: va.Currency, AccountNumber: va.AccountNumber, AccountName: va.AccountName,
		BankName: va.BankName, IsActive: va.IsActive, CreatedAt: stamp(va.CreatedAt),
	}
}

// currencyOfCountry gives a virtual account its currency from
// metadata.country; the default is NGN.
var currencyOfCountry = map[string]string{
	"NG": "NGN", "GH": "GHS", "KE": "KES", "ZA": "ZAR", "UG": "UGX",
	"US": "USD", "GB": "GBP", "CA": "CAD", "DE": "EUR", "FR": "EUR",
}

func isNigeria(country string) bool {
	switch strings.ToUpper(strings.TrimSpace(country)) {
	case "NG", "NGA", "NIGERIA":
		return true
	}
	return false
}

// createVirtualAccount is POST /accounts/virtual-accounts.
func (s *Server) createVirtualAccount(rq *apiRequest) *response {
	var p problems
	o, err := parseObject(rq.body, &p, &rq.notes)
	if err != nil {
		return s.fail(http.StatusBadRequest, payments.CodeInvalidJSON, err.Error())
	}
	va := &virtualAccount{BankName: sandboxBankName, IsActive: true, Currency: "NGN"}
	va.AccountType = o.required("account_type", maxCodeLen)
	p.oneOf("account_type", va.AccountType, "individual", "business")
	va.AccountName = o.required("account_name", maxNameLen)
	va.Email = o.required("email", 254)
	p.email("email", va.Email)
	if va.AccountType == "individual" {
		va.FirstName = o.required("first_name", maxNameLen)
		va.LastName = o.required("last_name", maxNameLen)
	} else {
		va.FirstName = o.text("first_name", maxNameLen)
		va.LastName = o.text("last_name", maxNameLen)
	}
	va.DisplayName = o.text("display_name", maxNameLen)
	va.Mobile = o.text("mobile_number", maxCodeLen)
	va.BVN = o.str("bvn")
	if m := o.child("metadata"); m != nil {
		va.Metadata = make(map[string]string)
		for _, f := range []string{"business_reg_number", "country", "use_case", "reference"} {
			if v := m.text(f, maxTextLen); v != "" {
				va.Metadata[f] = v
			}
		}
	}
	country := va.Metadata["country"]
	switch {
	case va.BVN != "" && !bvnPattern.MatchString(va.BVN):
		p.add("bvn", "must be exactly 11 digits")
	case va.BVN == "" && isNigeria(country):
		p.add("bvn", "is required for Nigerian accounts (metadata.country NG)")
	}
	if c, ok := currencyOfCountry[strings.ToUpper(country)]; ok {
		va.Currency = c
	}
	if len(p) > 0 {
		return s.invalid(p)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	number, err := s.newAccountNumber()
	if err != nil {
		return s.internal(err)
	}
	va.ID, va.AccountNumber, va.CreatedAt = s.ids.uuid(), number, s.clock.now()
	data, err := json.Marshal(va.json())
	if err != nil {
		return s.internal(err)
	}
	s.st.accounts = append(s.st.accounts, va)
	s.st.accountByID[va.ID] = va
	s.st.accountByNumber[va.AccountNumber] = va
	s.emit(payments.EventVirtualAccountCreated, data)
	return s.ok(http.StatusOK, "Virtual account created successfully", data)
}

var tenDigits = big.NewInt(10_000_000_000)

// newAccountNumber draws a random 10-digit account number not yet used.
// s.mu must be held.
func (s *Server) newAccountNumber() (string, error) {
	for range 100 {
		n, err := rand.Int(rand.Reader, tenDigits)
		if err != nil {
			return "", err
		}
		num := fmt.Sprintf("%010d", n)
		if s.st.accountByNumber[num] == nil && !isTestAccountNumber(num) {
			return num, nil
		}
	}
	return "", errors.New("no free account number after 100 draws")
}

type incomingJSON struct {
	ID               string    `json:"id"`
	Reference        string    `json:"reference"`
	Amount           string    `json:"amount"`
	Currency         string    `json:"currency"`
	Status           string    `json:"status"`
	Narration        string    `json:"narration"`
	VirtualAccountID string    `json:"virtual_account_id"`
	AccountNumber    string    `json:"account_number"`
	AccountName      string    `json:"account_name"`
	Payer            payerJSON `json:"payer"`
	ReceivedAt       string    `json:"received_at"`
	CreatedAt        string    `json:"created_at"`
}

type payerJSON struct {
	Name          string `json:"name"`
	AccountNumber string `json:"account_number"`
	BankName      string `json:"bank_name"`
}

// SimulateIncomingPayment plays a customer paying amount into the virtual
// account with the given account number, as a bank transfer would. currency
// "" means the account's currency; another currency than the account's is
// refused. The payment is recorded, credited to the
// merchant's balance in its currency (Balance), and a
// virtual_account.payment_received event is sent to the webhook. The payer
// is "Sandbox Payer" and the reference is generated.
func (s *Server) SimulateIncomingPayment(accountNumber string, amount decimal.Decimal, currency string) (IncomingPayment, error) {
	if s.closed() {
		return IncomingPayment{}, errClosed
	}
	if msg := amountProblem(amount); msg != "" {
		return IncomingPayment{}, errors.New("paymentstest: SimulateIncomingPayment: the amount " + msg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	va, ok := s.st.accountByNumber[accountNumber]
	if !ok {
		return IncomingPayment{}, fmt.Errorf("paymentstest: no virtual account has number %q", accountNumber)
	}
	if currency == "" {
		currency = va.Currency
	}
	if currency != va.Currency {
		return IncomingPayment{}, fmt.Errorf("paymentstest: virtual account %s takes %s, not %s", accountNumber, va.Currency, currency)
	}
	in := IncomingPayment{
		ID: s.ids.uuid(), VirtualAccountID: va.ID, AccountNumber: va.AccountNumber, AccountName: va.AccountName,
		Amount: amount, Currency: currency, Reference: fmt.Sprintf("SBX-IN-%06d", len(s.st.incoming)+1),
		PayerName: "Sandbox Payer", PayerAccount: "0123456789", PayerBank: "Sandbox Payer Bank",
		CreatedAt: s.clock.now(),
	}
	data, err := json.Marshal(in.json())
	if err != nil {
		return IncomingPayment{}, err
	}
	s.st.incoming = append(s.st.incoming, in)
	s.credit(currency, amount)
	s.emit(payments.EventVirtualAccountPaymentReceived, data)
	return in, nil
}

func (in *IncomingPayment) json() incomingJSON {
	return incomingJSON{
		ID: in.ID, Reference: in.Reference, Amount: money(in.Amount), Currency: in.Currency, Status: "successful",
		Narration: "Transfer from " + in.PayerName, VirtualAccountID: in.VirtualAccountID,
		AccountNumber: in.AccountNumber, AccountName: in.AccountName,
		Payer:      payerJSON{Name: in.PayerName, AccountNumber: in.PayerAccount, BankName: in.PayerBank},
		ReceivedAt: stamp(in.CreatedAt), CreatedAt: stamp(in.CreatedAt),
	}
}
