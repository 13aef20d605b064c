package payments

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/shopspring/decimal"
)

// Recipient is a saved payment destination. Its ID is what
// PaymentInitiateParams.RecipientID takes.
type Recipient struct {
	APIResource `json:"-"`

	ID                 string        `json:"id"`
	MerchantID         string        `json:"merchant_id"`
	AccountNumber      AccountNumber `json:"account_number"`
	AccountName        string        `json:"account_name"`
	AccountType        AccountType   `json:"account_type"`
	IsInternalAccount  bool          `json:"is_internal_account"`
	AccountCurrency    string        `json:"account_currency"`
	AccountBankName    string        `json:"account_bank_name"`
	AccountBankCode    string        `json:"account_bank_code"`
	AccountCountryCode string        `json:"account_country_code"`
	AccountCountry     string        `json:"account_country"`
	// Identification is the identity document on file, when the service
	// returns one. Its printed form hides the number and the image.
	Identification *Identification `json:"identification,omitempty"`
	// Limit is the per-payment limit set from AmountLimit, or nil when the
	// recipient has none. The service sends it as a string.
	Limit *decimal.Decimal `json:"limit,omitempty"`
	// PaymentDetails are the additional payment details on file.
	PaymentDetails *PaymentDetails `json:"payment_details,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
}

// Identification is an identity document attached to a recipient. Number and
// Image are PersonalData: masked where printed or logged, whole in JSON (the
// request, and your own storage).
type Identification struct {
	Type   IdentificationType `json:"identification_type,omitempty"`
	Number PersonalData       `json:"identification_number,omitempty"`
	// Image is the document image, Base64-encoded (standard alphabet).
	Image PersonalData `json:"identification_image,omitempty"`
}

// PaymentDetails are additional routing details of a recipient's account.
type PaymentDetails struct {
	AccountNumber AccountNumber `json:"account_number,omitempty"`
	BankCode      string        `json:"bank_code,omitempty"`
	BankName      string        `json:"bank_name,omitempty"`
	RoutingNumber string        `json:"routing_number,omitempty"`
	SwiftCode     string        `json:"swift_code,omitempty"`
	PaymentRails  string        `json:"payment_rails,omitempty"`
}

// AccountType says whether a recipient or virtual account belongs to a person
// or a company. Values the SDK does not know are passed through unchanged.
type AccountType string

// Account types defined by the specification.
const (
	AccountTypeIndividual AccountType = "individual"
	AccountTypeBusiness   AccountType = "business"
)

// knownAccountType reports whether t is one of the account types the
// specification lists.
func knownAccountType(t AccountType) bool {
	return t == AccountTypeIndividual || t == AccountTypeBusiness
}

// IdentificationType names the kind of identity document attached to a
// recipient. The specification gives passport and national_id as examples;
// other values are sent as given.
type IdentificationType string

// Identification types named by the specification.
const (
	IdentificationPassport   IdentificationType = "passport"
	IdentificationNationalID IdentificationType = "national_id"
)

// RecipientCreateParams are the fields of a new recipient. AccountNumber,
// AccountName, AccountType and AccountCurrency are required.
type RecipientCreateParams struct {
	AccountNumber   AccountNumber `json:"account_number"`
	AccountName     string        `json:"account_name"`
	AccountType     AccountType   `json:"account_type"`
	AccountCurrency string        `json:"account_currency"`
	// AccountCountryCode takes a country code or a country name.
	AccountCountryCode string `json:"account_country_code,omitempty"`
	AccountBankName    string `json:"account_bank_name,omitempty"`
	// AccountBankCode takes a bank code or a routing number.
	AccountBankCode string `json:"account_bank_code,omitempty"`
	// AmountLimit, when set, caps every payment to this recipient. It is
	// sent as a JSON number with its exact digits.
	AmountLimit    *Amount         `json:"amount_limit,omitempty"`
	Identification *Identification `json:"identification,omitempty"`
	PaymentDetails *PaymentDetails `json:"payment_details,omitempty"`
}

// RecipientUpdateParams are the fields to change on a recipient (the
// specification's "edit"). Empty fields are left out of the request and so
// keep their current value. Unlike on create, identification is sent as flat
// fields.
type RecipientUpdateParams struct {
	AccountNumber      AccountNumber      `json:"account_number,omitempty"`
	AccountName        string             `json:"account_name,omitempty"`
	AccountType        AccountType        `json:"account_type,omitempty"`
	AccountCurrency    string             `json:"account_currency,omitempty"`
	AccountCountryCode string             `json:"account_country_code,omitempty"`
	AccountBankName    string             `json:"account_bank_name,omitempty"`
	AccountBankCode    string             `json:"account_bank_code,omitempty"`
	AmountLimit        *Amount            `json:"amount_limit,omitempty"`
	IdentificationType IdentificationType `json:"identification_type,omitempty"`
	// IdentificationNumber is personal data: masked where printed or logged.
	IdentificationNumber PersonalData    `json:"identification_number,omitempty"`
	PaymentDetails       *PaymentDetails `json:"payment_details,omitempty"`
}

// The recipient operations check that the answer's limit is the one sent
// (recipientAgrees); Create and Update set sent to the AmountLimit.
var (
	opRecipientsCreate = &operation{Operation: Operation{Name: "recipients.create", Method: http.MethodPost, PathTemplate: "/payments/recipients"}, idempotent: true, status: http.StatusCreated,
		check: checkRecipient, agree: recipientAgrees}
	opRecipientsUpdate = &operation{Operation: Operation{Name: "recipients.update", Method: http.MethodPut, PathTemplate: "/payments/recipients/{id}"}, status: http.StatusOK,
		check: checkRecipient, agree: recipientAgrees}
)

func checkRecipient(out any) string { return lacking("id", out.(*Recipient).ID) }

// RecipientsService creates and edits recipients. Reach it as
// Client.Recipients.
type RecipientsService struct{ client *Client }

// Create saves a new recipient (POST /payments/recipients). The call carries
// an Idempotency-Key (a fresh random one unless WithIdempotencyKey gives
// one), so it is retried safely and never creates two recipients. Invalid
// params give a *ValidationError and nothing is sent.
//
// An answer whose limit is not the AmountLimit sent (compared by value:
// 250000 and 250000.00 agree), or whose member echoing an amount-like
// WithBodyField field ("...amount...", "...limit...") is not the value
// sent, is a *MalformedResponseError naming both amounts: a service that
// counts in minor units reads 250000 back as 25000000.00, and that limit
// would be silently wrong. The recipient is saved then, with that answer:
// its Response.Body has it whole. An answer without a limit is not checked.
// Tests: TestRecipientAmountsDisagree, TestRecipientAmountsAgree.
func (s *RecipientsService) Create(ctx context.Context, params *RecipientCreateParams, opts ...RequestOption) (*Recipient, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	op := *opRecipientsCreate
	op.sent = params.AmountLimit
	r := new(Recipient)
	if _, err := s.client.do(ctx, &op, "", params, r, opts); err != nil {
		return nil, err
	}
	return r, nil
}

// Update changes a recipient (PUT /payments/recipients/{id}) and returns it
// with all its current information. id must be a UUID. Its answer's
// amounts are checked as Create's are.
func (s *RecipientsService) Update(ctx context.Context, id string, params *RecipientUpdateParams, opts ...RequestOption) (*Recipient, error) {
	if err := params.validate(id); err != nil {
		return nil, err
	}
	op := *opRecipientsUpdate
	op.sent = params.AmountLimit
	r := new(Recipient)
	if _, err := s.client.do(ctx, &op, "/payments/recipients/"+url.PathEscape(id), params, r, opts); err != nil {
		return nil, err
	}
	return r, nil
}
