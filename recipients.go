package payments

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/paymentsapi/payments-go/internal/redact"
	"github.com/shopspring/decimal"
)

// Recipient is a saved payment destination. Its ID is what
// PaymentInitiateParams.RecipientID takes.
type Recipient struct {
	APIResource

	ID                 string      `json:"id"`
	MerchantID         string      `json:"merchant_id"`
	AccountNumber      string      `json:"account_number"`
	AccountName        string      `json:"account_name"`
	AccountType        AccountType `json:"account_type"`
	IsInternalAccount  bool        `json:"is_internal_account"`
	AccountCurrency    string      `json:"account_currency"`
	AccountBankName    string      `json:"account_bank_name"`
	AccountBankCode    string      `json:"account_bank_code"`
	AccountCountryCode string      `json:"account_country_code"`
	AccountCountry     string      `json:"account_country"`
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
// Image are personal data: Format and LogValue never print them.
type Identification struct {
	Type   IdentificationType `json:"identification_type,omitempty"`
	Number string             `json:"identification_number,omitempty"`
	// Image is the document image, Base64-encoded (standard alphabet).
	Image string `json:"identification_image,omitempty"`
}

// PaymentDetails are additional routing details of a recipient's account.
type PaymentDetails struct {
	AccountNumber string `json:"account_number,omitempty"`
	BankCode      string `json:"bank_code,omitempty"`
	BankName      string `json:"bank_name,omitempty"`
	RoutingNumber string `json:"routing_number,omitempty"`
	SwiftCode     string `json:"swift_code,omitempty"`
	PaymentRails  string `json:"payment_rails,omitempty"`
}

// AccountType says whether a recipient or virtual account belongs to a person
// or a company. Values the SDK does not know are passed through unchanged.
type AccountType string

// Account types defined by the specification.
const (
	AccountTypeIndividual AccountType = "individual"
	AccountTypeBusiness   AccountType = "business"
)

// Known reports whether t is one of the account types the specification lists.
func (t AccountType) Known() bool {
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
	AccountNumber   string      `json:"account_number"`
	AccountName     string      `json:"account_name"`
	AccountType     AccountType `json:"account_type"`
	AccountCurrency string      `json:"account_currency"`
	// AccountCountryCode takes a country code or a country name.
	AccountCountryCode string `json:"account_country_code,omitempty"`
	AccountBankName    string `json:"account_bank_name,omitempty"`
	// AccountBankCode takes a bank code or a routing number.
	AccountBankCode string `json:"account_bank_code,omitempty"`
	// AmountLimit, when set, caps every payment to this recipient. It is sent
	// as a JSON number with its exact digits.
	AmountLimit    *decimal.Decimal `json:"-"`
	Identification *Identification  `json:"identification,omitempty"`
	PaymentDetails *PaymentDetails  `json:"payment_details,omitempty"`
}

// MarshalJSON encodes the params as the service expects them, with
// amount_limit as an exact JSON number.
func (p RecipientCreateParams) MarshalJSON() ([]byte, error) { return json.Marshal(p.wire()) }

// wire returns the value that encodes as the params' JSON. The pipeline
// encodes it directly: given the params, encoding/json would call
// MarshalJSON and then validate and copy its output.
func (p *RecipientCreateParams) wire() any {
	type plain RecipientCreateParams
	return struct {
		plain
		AmountLimit json.Number `json:"amount_limit,omitempty"`
	}{plain(*p), jsonNumber(p.AmountLimit)}
}

// RecipientUpdateParams are the fields to change on a recipient (the
// specification's "edit"). Empty fields are left out of the request and so
// keep their current value. Unlike on create, identification is sent as flat
// fields.
type RecipientUpdateParams struct {
	AccountNumber      string             `json:"account_number,omitempty"`
	AccountName        string             `json:"account_name,omitempty"`
	AccountType        AccountType        `json:"account_type,omitempty"`
	AccountCurrency    string             `json:"account_currency,omitempty"`
	AccountCountryCode string             `json:"account_country_code,omitempty"`
	AccountBankName    string             `json:"account_bank_name,omitempty"`
	AccountBankCode    string             `json:"account_bank_code,omitempty"`
	AmountLimit        *decimal.Decimal   `json:"-"`
	IdentificationType IdentificationType `json:"identification_type,omitempty"`
	// IdentificationNumber is personal data; it never appears in errors or logs.
	IdentificationNumber string          `json:"identification_number,omitempty"`
	PaymentDetails       *PaymentDetails `json:"payment_details,omitempty"`
}

// MarshalJSON encodes the params as the service expects them, with
// amount_limit as an exact JSON number.
func (p RecipientUpdateParams) MarshalJSON() ([]byte, error) { return json.Marshal(p.wire()) }

// wire returns the value that encodes as the params' JSON (see
// RecipientCreateParams.wire).
func (p *RecipientUpdateParams) wire() any {
	type plain RecipientUpdateParams
	return struct {
		plain
		AmountLimit json.Number `json:"amount_limit,omitempty"`
	}{plain(*p), jsonNumber(p.AmountLimit)}
}

var (
	opRecipientsCreate = &operation{Operation: Operation{Name: "recipients.create", Method: http.MethodPost, PathTemplate: "/payments/recipients"}, idempotent: true,
		check: checkRecipient}
	opRecipientsUpdate = &operation{Operation: Operation{Name: "recipients.update", Method: http.MethodPut, PathTemplate: "/payments/recipients/{id}"},
		check: checkRecipient}
)

func checkRecipient(out any) string { return lacking("id", out.(*Recipient).ID) }

// RecipientsService creates and edits recipients. Reach it as
// Client.Recipients.
type RecipientsService struct{ client *Client }

// Create saves a new recipient (POST /payments/recipients). The call carries
// an Idempotency-Key (a fresh random one unless WithIdempotencyKey gives
// one), so it is retried safely and never creates two recipients. Invalid
// params give a *ValidationError and nothing is sent.
func (s *RecipientsService) Create(ctx context.Context, params *RecipientCreateParams, opts ...RequestOption) (*Recipient, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	r := new(Recipient)
	if _, err := s.client.do(ctx, opRecipientsCreate, "", params.wire(), r, opts); err != nil {
		return nil, err
	}
	return r, nil
}

// Update changes a recipient (PUT /payments/recipients/{id}) and returns it
// with all its current information. id must be a UUID.
func (s *RecipientsService) Update(ctx context.Context, id string, params *RecipientUpdateParams, opts ...RequestOption) (*Recipient, error) {
	if err := params.validate(id); err != nil {
		return nil, err
	}
	r := new(Recipient)
	if _, err := s.client.do(ctx, opRecipientsUpdate, "/payments/recipients/"+url.PathEscape(id), params.wire(), r, opts); err != nil {
		return nil, err
	}
	return r, nil
}

func (i Identification) masked() Identification {
	i.Number, i.Image = redact.Mask(i.Number), redact.Mask(i.Image)
	return i
}

// Format prints the identification, with any verb, with its number and
// image hidden.
func (i Identification) Format(f fmt.State, _ rune) { redact.FormatFields(f, i.masked()) }

// LogValue logs the identification with its number and image hidden.
func (i Identification) LogValue() slog.Value { return redact.LogFields(i.masked()) }

func (d PaymentDetails) masked() PaymentDetails {
	d.AccountNumber = redact.LastFour(d.AccountNumber)
	return d
}

// Format prints the details, with any verb, with the account number masked.
func (d PaymentDetails) Format(f fmt.State, _ rune) { redact.FormatFields(f, d.masked()) }

// LogValue logs the details with the account number masked.
func (d PaymentDetails) LogValue() slog.Value { return redact.LogFields(d.masked()) }

func (r Recipient) masked() Recipient {
	r.AccountNumber = redact.LastFour(r.AccountNumber)
	r.Identification = redact.MaskedPtr(r.Identification, Identification.masked)
	r.PaymentDetails = redact.MaskedPtr(r.PaymentDetails, PaymentDetails.masked)
	return r
}

// Format prints the recipient's fields, with any verb, with its personal
// data masked (the account number keeps its last four digits).
func (r Recipient) Format(f fmt.State, _ rune) { redact.FormatFields(f, r.masked()) }

// LogValue logs the recipient with its personal data masked.
func (r Recipient) LogValue() slog.Value { return redact.LogFields(r.masked()) }

func (p RecipientCreateParams) masked() RecipientCreateParams {
	p.AccountNumber = redact.LastFour(p.AccountNumber)
	p.Identification = redact.MaskedPtr(p.Identification, Identification.masked)
	p.PaymentDetails = redact.MaskedPtr(p.PaymentDetails, PaymentDetails.masked)
	return p
}

// Format prints the params, with any verb, with their personal data masked.
func (p RecipientCreateParams) Format(f fmt.State, _ rune) { redact.FormatFields(f, p.masked()) }

// LogValue logs the params with their personal data masked.
func (p RecipientCreateParams) LogValue() slog.Value { return redact.LogFields(p.masked()) }

func (p RecipientUpdateParams) masked() RecipientUpdateParams {
	p.AccountNumber = redact.LastFour(p.AccountNumber)
	p.IdentificationNumber = redact.Mask(p.IdentificationNumber)
	p.PaymentDetails = redact.MaskedPtr(p.PaymentDetails, PaymentDetails.masked)
	return p
}

// Format prints the params, with any verb, with their personal data masked.
func (p RecipientUpdateParams) Format(f fmt.State, _ rune) { redact.FormatFields(f, p.masked()) }

// LogValue logs the params with their personal data masked.
func (p RecipientUpdateParams) LogValue() slog.Value { return redact.LogFields(p.masked()) }
