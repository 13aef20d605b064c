package payments

import (
	"fmt"
	"log/slog"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// Personal data (BVNs, identification numbers and images, account and phone
// numbers, email addresses) never reaches a printed or logged value: every
// type that carries it has String, GoString and LogValue methods that print a
// copy with it masked (account and phone numbers keep their last four
// characters). The JSON a type sends to the service is not affected.

// scrub masks the client's API key in text the service sent that is logged
// as received (the stan): a service or proxy that echoes the key must not
// put it in a log line.
func (c *Client) scrub(s string) string { return redact.Secrets(s, c.key.raw) }

func (i Identification) masked() Identification {
	i.Number, i.Image = redact.Mask(i.Number), redact.Mask(i.Image)
	return i
}

func maskedPtr[T any](p *T, mask func(T) T) *T {
	if p == nil {
		return nil
	}
	m := mask(*p)
	return &m
}

func (d PaymentDetails) masked() PaymentDetails {
	d.AccountNumber = redact.LastFour(d.AccountNumber)
	return d
}

func (r Recipient) masked() Recipient {
	r.apiResource = apiResource{} // its raw JSON holds the data in clear
	r.AccountNumber = redact.LastFour(r.AccountNumber)
	r.Identification = maskedPtr(r.Identification, Identification.masked)
	r.PaymentDetails = maskedPtr(r.PaymentDetails, PaymentDetails.masked)
	return r
}

func (p RecipientCreateParams) masked() RecipientCreateParams {
	p.AccountNumber = redact.LastFour(p.AccountNumber)
	p.Identification = maskedPtr(p.Identification, Identification.masked)
	p.PaymentDetails = maskedPtr(p.PaymentDetails, PaymentDetails.masked)
	return p
}

func (p RecipientUpdateParams) masked() RecipientUpdateParams {
	p.AccountNumber = redact.LastFour(p.AccountNumber)
	p.IdentificationNumber = redact.Mask(p.IdentificationNumber)
	p.PaymentDetails = maskedPtr(p.PaymentDetails, PaymentDetails.masked)
	return p
}

func (p VirtualAccountCreateParams) masked() VirtualAccountCreateParams {
	p.BVN = redact.Mask(p.BVN)
	p.Email = redact.Mask(p.Email)
	p.MobileNumber = redact.LastFour(p.MobileNumber)
	return p
}

func (v VirtualAccount) masked() VirtualAccount {
	v.apiResource = apiResource{}
	v.AccountNumber = redact.LastFour(v.AccountNumber)
	return v
}

// printed formats v, a masked copy converted to a type without methods, with
// its field names; nested values are printed in full (masked too).
func printed(v any) string { return fmt.Sprintf("%+v", v) }

// String prints the identification with its number and image hidden.
func (i Identification) String() string {
	type plain Identification
	return printed(plain(i.masked()))
}

// GoString prints the identification with its number and image hidden.
func (i Identification) GoString() string { return i.String() }

// LogValue logs the identification with its number and image hidden.
func (i Identification) LogValue() slog.Value {
	type plain Identification
	return slog.AnyValue(plain(i.masked()))
}

// String prints the details with the account number masked.
func (d PaymentDetails) String() string {
	type plain PaymentDetails
	return printed(plain(d.masked()))
}

// GoString prints the details with the account number masked.
func (d PaymentDetails) GoString() string { return d.String() }

// LogValue logs the details with the account number masked.
func (d PaymentDetails) LogValue() slog.Value {
	type plain PaymentDetails
	return slog.AnyValue(plain(d.masked()))
}

// String prints the recipient with its personal data masked.
func (r Recipient) String() string {
	type plain Recipient
	return printed(plain(r.masked()))
}

// GoString prints the recipient with its personal data masked.
func (r Recipient) GoString() string { return r.String() }

// LogValue logs the recipient with its personal data masked.
func (r Recipient) LogValue() slog.Value {
	type plain Recipient
	return slog.AnyValue(plain(r.masked()))
}

// String prints the params with their personal data masked.
func (p RecipientCreateParams) String() string {
	type plain RecipientCreateParams
	return printed(plain(p.masked()))
}

// GoString prints the params with their personal data masked.
func (p RecipientCreateParams) GoString() string { return p.String() }

// LogValue logs the params with their personal data masked.
func (p RecipientCreateParams) LogValue() slog.Value {
	type plain RecipientCreateParams
	return slog.AnyValue(plain(p.masked()))
}

// String prints the params with their personal data masked.
func (p RecipientUpdateParams) String() string {
	type plain RecipientUpdateParams
	return printed(plain(p.masked()))
}

// GoString prints the params with their personal data masked.
func (p RecipientUpdateParams) GoString() string { return p.String() }

// LogValue logs the params with their personal data masked.
func (p RecipientUpdateParams) LogValue() slog.Value {
	type plain RecipientUpdateParams
	return slog.AnyValue(plain(p.masked()))
}

// String prints the params with the BVN, email and mobile number masked.
func (p VirtualAccountCreateParams) String() string {
	type plain VirtualAccountCreateParams
	return printed(plain(p.masked()))
}

// GoString prints the params with the BVN, email and mobile number masked.
func (p VirtualAccountCreateParams) GoString() string { return p.String() }

// LogValue logs the params with the BVN, email and mobile number masked.
func (p VirtualAccountCreateParams) LogValue() slog.Value {
	type plain VirtualAccountCreateParams
	return slog.AnyValue(plain(p.masked()))
}

// String prints the virtual account with its number masked.
func (v VirtualAccount) String() string {
	type plain VirtualAccount
	return printed(plain(v.masked()))
}

// GoString prints the virtual account with its number masked.
func (v VirtualAccount) GoString() string { return v.String() }

// LogValue logs the virtual account with its number masked.
func (v VirtualAccount) LogValue() slog.Value {
	type plain VirtualAccount
	return slog.AnyValue(plain(v.masked()))
}
