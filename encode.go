package payments

import "encoding/json"

// This file makes the request body of the params that carry an Amount
// without encoding/json's second pass over it. Amount is a json.Marshaler,
// and encoding/json scans (compacts) whatever a MarshalJSON returns: 0.4 µs
// of the 0.9 µs an Initiate spent encoding its body, where a hand-written
// client's json.Number costs a validity check (CPU profile, BENCHMARKS.md).
// The bytes are the same: encoding/json writes a json.Number as its text,
// and Amount.MarshalJSON returns the decimal's text, which compacting leaves
// unchanged. TestWireBodiesAreWhatEncodingJSONWrites holds every field of the
// three params to json.Marshal's bytes.
//
// Only the exact params types go through here (never a struct that embeds
// them: Client.Do sends that as encoding/json writes it), and nothing of it
// is a method: the params stay plain structs for encoding/json and gob.

// wireScratch is where a call's copy of its params is made: part of the
// call's allocation (see call), not one of its own.
type wireScratch struct {
	initiate        initiateWire
	recipientCreate recipientCreateWire
	recipientUpdate recipientUpdateWire
}

// wireBody returns what encodeBody marshals for body: a copy of the params
// of Initiate or of a recipient's create or update with their amounts as
// json.Number, made in w, or body itself.
func wireBody(body any, w *wireScratch) any {
	switch p := body.(type) {
	case *PaymentInitiateParams:
		if p != nil {
			w.initiate = initiateWire{Amount: json.Number(p.Amount.String()), Currency: p.Currency, RecipientID: p.RecipientID,
				Description: p.Description, Reference: p.Reference, TransactionType: p.TransactionType,
				TransactionCategory: p.TransactionCategory, TransactionTags: p.TransactionTags,
				TransactionNotes: p.TransactionNotes, Channel: p.Channel, SubType: p.SubType}
			return &w.initiate
		}
	case *RecipientCreateParams:
		if p != nil {
			w.recipientCreate = recipientCreateWire{AccountNumber: p.AccountNumber, AccountName: p.AccountName, AccountType: p.AccountType,
				AccountCurrency: p.AccountCurrency, AccountCountryCode: p.AccountCountryCode, AccountBankName: p.AccountBankName,
				AccountBankCode: p.AccountBankCode, AmountLimit: amountNumber(p.AmountLimit),
				Identification: p.Identification, PaymentDetails: p.PaymentDetails}
			return &w.recipientCreate
		}
	case *RecipientUpdateParams:
		if p != nil {
			w.recipientUpdate = recipientUpdateWire{AccountNumber: p.AccountNumber, AccountName: p.AccountName, AccountType: p.AccountType,
				AccountCurrency: p.AccountCurrency, AccountCountryCode: p.AccountCountryCode, AccountBankName: p.AccountBankName,
				AccountBankCode: p.AccountBankCode, AmountLimit: amountNumber(p.AmountLimit),
				IdentificationType: p.IdentificationType, IdentificationNumber: p.IdentificationNumber,
				PaymentDetails: p.PaymentDetails}
			return &w.recipientUpdate
		}
	}
	return body
}

// amountNumber is a *Amount as json.Number: "" (left out by omitempty, as
// encoding/json leaves out a nil pointer) when a is nil.
func amountNumber(a *Amount) json.Number {
	if a == nil {
		return ""
	}
	return json.Number(a.String())
}

// The params with an Amount, field for field in the same order with the
// same tags, each amount a json.Number.
type (
	initiateWire struct {
		Amount              json.Number `json:"amount"`
		Currency            string      `json:"currency"`
		RecipientID         string      `json:"recipient_id"`
		Description         string      `json:"description,omitempty"`
		Reference           string      `json:"reference"`
		TransactionType     string      `json:"transaction_type,omitempty"`
		TransactionCategory string      `json:"transaction_category,omitempty"`
		TransactionTags     string      `json:"transaction_tags,omitempty"`
		TransactionNotes    string      `json:"transaction_notes,omitempty"`
		Channel             string      `json:"channel,omitempty"`
		SubType             string      `json:"sub_type,omitempty"`
	}
	recipientCreateWire struct {
		AccountNumber      AccountNumber   `json:"account_number"`
		AccountName        string          `json:"account_name"`
		AccountType        AccountType     `json:"account_type"`
		AccountCurrency    string          `json:"account_currency"`
		AccountCountryCode string          `json:"account_country_code,omitempty"`
		AccountBankName    string          `json:"account_bank_name,omitempty"`
		AccountBankCode    string          `json:"account_bank_code,omitempty"`
		AmountLimit        json.Number     `json:"amount_limit,omitempty"`
		Identification     *Identification `json:"identification,omitempty"`
		PaymentDetails     *PaymentDetails `json:"payment_details,omitempty"`
	}
	recipientUpdateWire struct {
		AccountNumber        AccountNumber      `json:"account_number,omitempty"`
		AccountName          string             `json:"account_name,omitempty"`
		AccountType          AccountType        `json:"account_type,omitempty"`
		AccountCurrency      string             `json:"account_currency,omitempty"`
		AccountCountryCode   string             `json:"account_country_code,omitempty"`
		AccountBankName      string             `json:"account_bank_name,omitempty"`
		AccountBankCode      string             `json:"account_bank_code,omitempty"`
		AmountLimit          json.Number        `json:"amount_limit,omitempty"`
		IdentificationType   IdentificationType `json:"identification_type,omitempty"`
		IdentificationNumber PersonalData       `json:"identification_number,omitempty"`
		PaymentDetails       *PaymentDetails    `json:"payment_details,omitempty"`
	}
)
