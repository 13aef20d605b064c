package paymentstest

import (
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/shopspring/decimal"
)

// state is everything the fake has created. Server.mu guards it.
type state struct {
	recipients      []*recipient
	recipientByID   map[string]*recipient
	payments        []*payment
	paymentByID     map[string]*payment
	paymentByQuote  map[string]*payment
	accounts        []*virtualAccount
	accountByID     map[string]*virtualAccount
	accountByNumber map[string]*virtualAccount
	incoming        []IncomingPayment
	money           balances
}

func (st *state) init() {
	st.recipientByID = make(map[string]*recipient)
	st.paymentByID = make(map[string]*payment)
	st.paymentByQuote = make(map[string]*payment)
	st.accountByID = make(map[string]*virtualAccount)
	st.accountByNumber = make(map[string]*virtualAccount)
}

type identification struct {
	Type   string
	Number string
	Image  string
}

type paymentDetails struct {
	AccountNumber string `json:"account_number,omitempty"`
	BankCode      string `json:"bank_code,omitempty"`
	BankName      string `json:"bank_name,omitempty"`
	RoutingNumber string `json:"routing_number,omitempty"`
	SwiftCode     string `json:"swift_code,omitempty"`
	PaymentRails  string `json:"payment_rails,omitempty"`
}

type recipient struct {
	ID, MerchantID                     string
	AccountNumber, AccountName         string
	AccountType, AccountCurrency       string
	AccountBankName, AccountBankCode   string
	AccountCountryCode, AccountCountry string
	IsInternalAccount                  bool
	Identification                     *identification
	Limit                              *decimal.Decimal
	PaymentDetails                     *paymentDetails
	CreatedAt, UpdatedAt               time.Time
	// Verify is where its verification stands; VerifyRound counts the
	// verifications, so that a late one of an older account number is
	// dropped.
	Verify      verification
	VerifyRound int
}

type quote struct {
	ID                       string
	Amount, Fee, TotalAmount decimal.Decimal
	ExchangeRate             decimal.Decimal
	Currency                 string
	CreatedAt, ExpiresAt     time.Time
}

type payment struct {
	ID, RecipientID, Reference    string
	Status                        payments.PaymentStatus
	Amount                        decimal.Decimal
	Currency, Description         string
	Type, SubType, Category, Tags string
	Channel, Notes                string
	IsReversed, IsCompleted       bool
	// Confirmed is set by confirm; a payment of AmountCompletesLate stays
	// pending after it until the processing delay has passed.
	Confirmed            bool
	TransactionDate      time.Time
	CreatedAt, UpdatedAt time.Time
	Quote                quote
}

// executed reports whether confirm has run on the payment.
func (p *payment) executed() bool { return p.Confirmed || p.Status != payments.PaymentStatusPending }

type virtualAccount struct {
	ID, Currency, AccountNumber string
	AccountName, BankName       string
	IsActive                    bool
	CreatedAt                   time.Time
	AccountType, Email          string
	FirstName, LastName         string
	DisplayName, BVN, Mobile    string
	Metadata                    map[string]string
}

// IncomingPayment is money paid into a virtual account, made by
// SimulateIncomingPayment. Its JSON form is the data of the
// virtual_account.payment_received event.
type IncomingPayment struct {
	// ID is the transaction's id.
	ID string
	// VirtualAccountID, AccountNumber and AccountName name the account
	// that received the money.
	VirtualAccountID string
	AccountNumber    string
	AccountName      string
	Amount           decimal.Decimal
	Currency         string
	// Reference is the transfer's reference, "SBX-IN-000001" and so on.
	Reference string
	// PayerName, PayerAccount and PayerBank describe the sender.
	PayerName    string
	PayerAccount string
	PayerBank    string
	// CreatedAt is the server's time of receipt.
	CreatedAt time.Time
}

// money renders an amount with at least two decimal places.
func money(d decimal.Decimal) string {
	return d.StringFixed(max(2, -d.Exponent()))
}

func decimalPtr(d *decimal.Decimal) *decimal.Decimal {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

func (r *recipient) sdk() payments.Recipient {
	out := payments.Recipient{
		ID: r.ID, MerchantID: r.MerchantID,
		AccountNumber: payments.AccountNumber(r.AccountNumber), AccountName: r.AccountName,
		AccountType: payments.AccountType(r.AccountType), IsInternalAccount: r.IsInternalAccount,
		AccountCurrency: r.AccountCurrency, AccountBankName: r.AccountBankName, AccountBankCode: r.AccountBankCode,
		AccountCountryCode: r.AccountCountryCode, AccountCountry: r.AccountCountry,
		Limit: decimalPtr(r.Limit), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	if id := r.Identification; id != nil {
		out.Identification = &payments.Identification{Type: payments.IdentificationType(id.Type), Number: payments.PersonalData(id.Number), Image: payments.PersonalData(id.Image)}
	}
	if pd := r.PaymentDetails; pd != nil {
		out.PaymentDetails = &payments.PaymentDetails{
			AccountNumber: payments.AccountNumber(pd.AccountNumber), BankCode: pd.BankCode, BankName: pd.BankName,
			RoutingNumber: pd.RoutingNumber, SwiftCode: pd.SwiftCode, PaymentRails: pd.PaymentRails,
		}
	}
	return out
}

func (p *payment) sdk() payments.Payment {
	q := p.Quote
	return payments.Payment{
		ID: p.ID, Reference: p.Reference, Status: p.Status, Amount: p.Amount, Currency: p.Currency,
		Description: p.Description, Type: p.Type, SubType: p.SubType, Category: p.Category,
		TransactionDate: p.TransactionDate, Tags: p.Tags, IsReversed: p.IsReversed, IsCompleted: p.IsCompleted,
		Channel: p.Channel, Notes: p.Notes, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		Quote: &payments.Quote{
			QuoteID: q.ID, Amount: q.Amount, Fee: q.Fee, ExchangeRate: q.ExchangeRate,
			TotalAmount: q.TotalAmount, Currency: q.Currency, ExpiresAt: q.ExpiresAt,
		},
	}
}

func (va *virtualAccount) sdk() payments.VirtualAccount {
	return payments.VirtualAccount{
		ID: va.ID, Currency: va.Currency, AccountNumber: payments.AccountNumber(va.AccountNumber), AccountName: va.AccountName,
		BankName: va.BankName, IsActive: va.IsActive, CreatedAt: va.CreatedAt,
	}
}

// recipientsAll returns every recipient, in creation order. The values are
// copies; they carry no LastResponse.
func (s *Server) recipientsAll() []payments.Recipient { return sdkAll(s, &s.st.recipients) }

// Recipient returns the recipient with the given id.
func (s *Server) Recipient(id string) (payments.Recipient, bool) {
	return sdkByID(s, s.st.recipientByID, id)
}

// Payments returns every payment, in creation order, each with its quote.
func (s *Server) Payments() []payments.Payment { return sdkAll(s, &s.st.payments) }

// Payment returns the payment with the given id.
func (s *Server) Payment(id string) (payments.Payment, bool) {
	return sdkByID(s, s.st.paymentByID, id)
}

// stored is a record of the fake's state that has an SDK form.
type stored[R any] interface{ sdk() R }

// sdkAll returns the SDK form of every record of *items, read under the
// server's lock.
func sdkAll[T stored[R], R any](s *Server, items *[]T) []R {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]R, 0, len(*items))
	for _, it := range *items {
		out = append(out, it.sdk())
	}
	return out
}

// sdkByID returns the SDK form of the record with id, read under the
// server's lock.
func sdkByID[T stored[R], R any](s *Server, byID map[string]T, id string) (R, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it, ok := byID[id]; ok {
		return it.sdk(), true
	}
	var zero R
	return zero, false
}

// PaymentsByReference returns the payments created with a reference, in
// creation order. "Exactly one payment per order" is
// len(PaymentsByReference(ref)) == 1.
func (s *Server) PaymentsByReference(reference string) []payments.Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []payments.Payment
	for _, p := range s.st.payments {
		if p.Reference == reference {
			out = append(out, p.sdk())
		}
	}
	return out
}

// virtualAccountsAll returns every virtual account, in creation order.
func (s *Server) virtualAccountsAll() []payments.VirtualAccount {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]payments.VirtualAccount, 0, len(s.st.accounts))
	for _, va := range s.st.accounts {
		out = append(out, va.sdk())
	}
	return out
}

// virtualAccountByID returns the virtual account with the given id.
func (s *Server) virtualAccountByID(id string) (payments.VirtualAccount, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if va, ok := s.st.accountByID[id]; ok {
		return va.sdk(), true
	}
	return payments.VirtualAccount{}, false
}

// incomingPaymentsAll returns every payment received by a virtual account, in
// order.
func (s *Server) incomingPaymentsAll() []IncomingPayment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]IncomingPayment(nil), s.st.incoming...)
}
