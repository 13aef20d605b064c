package payments

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/shopspring/decimal"
)

// VirtualAccount is a bank account opened on demand to receive money. Money
// paid into it is credited to the merchant's main account.
type VirtualAccount struct {
	APIResource `json:"-"`

	ID       string `json:"id"`
	Currency string `json:"currency"`
	// AccountNumber is the generated, unique number to share with
	// customers: string(va.AccountNumber) is the number, since it prints
	// and logs as its last four digits.
	AccountNumber AccountNumber `json:"account_number"`
	AccountName   string        `json:"account_name"`
	BankName      string        `json:"bank_name"`
	IsActive      bool          `json:"is_active"`
	CreatedAt     time.Time     `json:"created_at"`
}

// VirtualAccountCreateParams describe the holder of a new virtual account.
// AccountType, AccountName and a valid Email are required; FirstName and
// LastName are required for individual accounts, and an 11-digit BVN for
// Nigerian accounts (Metadata.Country "NG", "NGA" or "Nigeria"). The BVN,
// the email and the mobile number are PersonalData: the printed and logged
// forms of these params hide them; their JSON (the request) has them whole.
type VirtualAccountCreateParams struct {
	AccountType  AccountType             `json:"account_type"`
	AccountName  string                  `json:"account_name"`
	Email        PersonalData            `json:"email"`
	FirstName    string                  `json:"first_name,omitempty"`
	LastName     string                  `json:"last_name,omitempty"`
	DisplayName  string                  `json:"display_name,omitempty"`
	BVN          PersonalData            `json:"bvn,omitempty"`
	MobileNumber PersonalData            `json:"mobile_number,omitempty"`
	Metadata     *VirtualAccountMetadata `json:"metadata,omitempty"`
}

// VirtualAccountMetadata is optional information about a virtual account.
type VirtualAccountMetadata struct {
	BusinessRegNumber string `json:"business_reg_number,omitempty"`
	// Country is a country code; "NG" makes the BVN required.
	Country string `json:"country,omitempty"`
	UseCase string `json:"use_case,omitempty"`
	// Reference is your own reference for the account.
	Reference string `json:"reference,omitempty"`
}

// VirtualAccountsService opens virtual accounts. Reach it as
// Client.VirtualAccounts.
type VirtualAccountsService struct{ client *Client }

var opVirtualAccountsCreate = &operation{Operation: Operation{Name: "virtual_accounts.create", Method: http.MethodPost, PathTemplate: "/accounts/virtual-accounts"}, status: http.StatusOK,
	check: func(out any) string { return lacking("id", out.(*VirtualAccount).ID) }, agree: virtualAccountAgrees}

// Create opens a virtual account (POST /accounts/virtual-accounts). The
// specification gives this operation no Idempotency-Key, so the call is
// retried only when you pass WithIdempotencyKey: without one, a failure after
// the request left may or may not have opened an account.
//
// The params carry no amount. An amount you send with WithBodyField (a name
// holding "amount" or "limit", a number) that the answer echoes under the
// same name must come back as sent, by value: otherwise (the service
// counting in minor units: 5000 read back as 500000) the call is a
// *MalformedResponseError naming both amounts, and the account is open,
// its answer whole in Response.Body. Test: TestVirtualAccountAmountsDisagree.
func (s *VirtualAccountsService) Create(ctx context.Context, params *VirtualAccountCreateParams, opts ...RequestOption) (*VirtualAccount, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	va := new(VirtualAccount)
	if _, err := s.client.do(ctx, opVirtualAccountsCreate, "", params, va, opts); err != nil {
		return nil, err
	}
	return va, nil
}

// VirtualAccountPayment is money paid into one of your virtual accounts, the
// data of a virtual_account.payment_received event. The specification does
// not define this object, so the SDK reads the common field names for each
// member (listed on each field) and leaves a member empty when none is
// present; RawJSON returns the data exactly as received, with any field not
// listed here.
//
// Payer.AccountNumber and AccountNumber print and log only their last four
// digits, and a narration (Description) its account-number-like digits
// masked (its amounts are kept).
type VirtualAccountPayment struct {
	APIResource `json:"-"`

	// ID is the transaction's id: "id" or "transaction_id".
	ID string
	// Reference is the transfer's reference: "reference",
	// "transaction_reference" or "session_id".
	Reference string
	// Amount is the amount received ("amount", a JSON string or number,
	// read with its exact digits). Data without an amount does not decode.
	Amount decimal.Decimal
	// Currency is the currency code ("currency").
	Currency string
	// Status is the transaction's status as sent ("status"), if any.
	Status string
	// Description is the payer's narration: "description", "narration" or
	// "remark".
	Description string
	// VirtualAccountID is the id of the virtual account that received the
	// money: "virtual_account_id", "account_id" or "virtual_account.id".
	VirtualAccountID string
	// AccountNumber is the number of the virtual account that received the
	// money: "virtual_account_number", "account_number" or
	// "virtual_account.account_number".
	AccountNumber AccountNumber
	// AccountName is the virtual account's name: "account_name" or
	// "virtual_account.account_name".
	AccountName string
	// Payer is who sent the money, as far as the data says: a "payer",
	// "sender" or "originator" object, or flat "payer_*", "sender_*" or
	// "originator_*" fields.
	Payer Payer
	// ReceivedAt is when the money arrived: "received_at", "paid_at",
	// "transaction_date" or, failing those, "created_at".
	ReceivedAt time.Time
	// CreatedAt is "created_at", when present.
	CreatedAt time.Time
}

// Payer is the sender of a payment received on a virtual account. Its
// AccountNumber prints and logs as its last four digits.
type Payer struct {
	Name          string
	AccountNumber AccountNumber
	BankName      string
	BankCode      string
}

type payerWire struct {
	Name          looseString `json:"name"`
	AccountName   looseString `json:"account_name"`
	AccountNumber looseString `json:"account_number"`
	BankName      looseString `json:"bank_name"`
	BankCode      looseString `json:"bank_code"`
}

type vaRefWire struct {
	ID            looseString `json:"id"`
	AccountNumber looseString `json:"account_number"`
	AccountName   looseString `json:"account_name"`
}

// vaPaymentWire holds every member name VirtualAccountPayment reads. Nested
// objects are kept raw so that an unexpected shape leaves a member empty
// instead of failing the whole decode.
type vaPaymentWire struct {
	ID                   looseString      `json:"id"`
	TransactionID        looseString      `json:"transaction_id"`
	Reference            looseString      `json:"reference"`
	TransactionReference looseString      `json:"transaction_reference"`
	SessionID            looseString      `json:"session_id"`
	Amount               *decimal.Decimal `json:"amount"`
	Currency             looseString      `json:"currency"`
	Status               looseString      `json:"status"`
	Description          looseString      `json:"description"`
	Narration            looseString      `json:"narration"`
	Remark               looseString      `json:"remark"`
	VirtualAccountID     looseString      `json:"virtual_account_id"`
	AccountID            looseString      `json:"account_id"`
	VirtualAccountNumber looseString      `json:"virtual_account_number"`
	AccountNumber        looseString      `json:"account_number"`
	AccountName          looseString      `json:"account_name"`
	VirtualAccount       json.RawMessage  `json:"virtual_account"`

	Payer                   json.RawMessage `json:"payer"`
	Sender                  json.RawMessage `json:"sender"`
	Originator              json.RawMessage `json:"originator"`
	PayerName               looseString     `json:"payer_name"`
	SenderName              looseString     `json:"sender_name"`
	OriginatorName          looseString     `json:"originator_name"`
	PayerAccountNumber      looseString     `json:"payer_account_number"`
	SenderAccountNumber     looseString     `json:"sender_account_number"`
	OriginatorAccountNumber looseString     `json:"originator_account_number"`
	PayerBankName           looseString     `json:"payer_bank_name"`
	SenderBankName          looseString     `json:"sender_bank_name"`
	OriginatorBankName      looseString     `json:"originator_bank_name"`
	PayerBankCode           looseString     `json:"payer_bank_code"`
	SenderBankCode          looseString     `json:"sender_bank_code"`
	OriginatorBankCode      looseString     `json:"originator_bank_code"`

	ReceivedAt      looseTime `json:"received_at"`
	PaidAt          looseTime `json:"paid_at"`
	TransactionDate looseTime `json:"transaction_date"`
	CreatedAt       looseTime `json:"created_at"`
}

// decodeData reads a payment received on a virtual account from any of the
// field names listed on VirtualAccountPayment. Only a missing amount, or one
// that is not a number, is an error: money is never guessed.
func (v *VirtualAccountPayment) decodeData(b []byte) error {
	var w vaPaymentWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var va vaRefWire
	_ = json.Unmarshal(w.VirtualAccount, &va) // optional; another shape leaves it empty
	payer := w.payer()

	*v = VirtualAccountPayment{
		ID:               firstString(w.ID, w.TransactionID),
		Reference:        firstString(w.Reference, w.TransactionReference, w.SessionID),
		Currency:         string(w.Currency),
		Status:           string(w.Status),
		Description:      firstString(w.Description, w.Narration, w.Remark),
		VirtualAccountID: firstString(w.VirtualAccountID, w.AccountID, va.ID),
		AccountNumber:    AccountNumber(firstString(w.VirtualAccountNumber, w.AccountNumber, va.AccountNumber)),
		AccountName:      firstString(w.AccountName, va.AccountName),
		Payer:            payer,
		ReceivedAt:       firstTime(w.ReceivedAt, w.PaidAt, w.TransactionDate, w.CreatedAt),
		CreatedAt:        time.Time(w.CreatedAt),
	}
	if w.Amount == nil {
		return errNoAmount
	}
	v.Amount = *w.Amount
	return nil
}

var errNoAmount = errors.New("it has no amount")

func (w *vaPaymentWire) payer() Payer {
	var nested payerWire
	for _, raw := range []json.RawMessage{w.Payer, w.Sender, w.Originator} {
		var p payerWire
		if len(raw) > 0 && json.Unmarshal(raw, &p) == nil && p != (payerWire{}) {
			nested = p
			break
		}
	}
	return Payer{
		Name:          firstString(nested.Name, nested.AccountName, w.PayerName, w.SenderName, w.OriginatorName),
		AccountNumber: AccountNumber(firstString(nested.AccountNumber, w.PayerAccountNumber, w.SenderAccountNumber, w.OriginatorAccountNumber)),
		BankName:      firstString(nested.BankName, w.PayerBankName, w.SenderBankName, w.OriginatorBankName),
		BankCode:      firstString(nested.BankCode, w.PayerBankCode, w.SenderBankCode, w.OriginatorBankCode),
	}
}

func firstString(ss ...looseString) string {
	for _, s := range ss {
		if s != "" {
			return string(s)
		}
	}
	return ""
}

func firstTime(ts ...looseTime) time.Time {
	for _, t := range ts {
		if !time.Time(t).IsZero() {
			return time.Time(t)
		}
	}
	return time.Time{}
}
