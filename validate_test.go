package payments_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// validationCase is one call that must be refused before anything is sent,
// with exactly the fields that must be reported. The cases of the bad-value
// tables (badInputs) name one field each and carry the offending value,
// which the error must not repeat.
type validationCase struct {
	name     string
	call     func(c *payments.Client) error
	fields   []string
	value    string // the offending value, checked against the error text
	hasValue bool   // the case comes from a bad-value table and value is set
}

func createRecipientWith(mut func(p *payments.RecipientCreateParams)) func(c *payments.Client) error {
	return func(c *payments.Client) error {
		p := validRecipientParams()
		mut(p)
		_, err := c.Recipients.Create(context.Background(), p)
		return err
	}
}

func updateRecipientWith(id string, p *payments.RecipientUpdateParams) func(c *payments.Client) error {
	return func(c *payments.Client) error {
		_, err := c.Recipients.Update(context.Background(), id, p)
		return err
	}
}

func initiateWith(mut func(p *payments.PaymentInitiateParams)) func(c *payments.Client) error {
	return func(c *payments.Client) error {
		p := validInitiateParams()
		mut(p)
		_, err := c.Payments.Initiate(context.Background(), p)
		return err
	}
}

func virtualAccountWith(mut func(p *payments.VirtualAccountCreateParams)) func(c *payments.Client) error {
	return func(c *payments.Client) error {
		p := validVirtualAccountParams()
		mut(p)
		_, err := c.VirtualAccounts.Create(context.Background(), p)
		return err
	}
}

func validationCases() []validationCase {
	return []validationCase{
		// Recipients.Create: the spec's required fields.
		{name: "recipient nil params", call: func(c *payments.Client) error {
			_, err := c.Recipients.Create(context.Background(), nil)
			return err
		}, fields: []string{"params"}},
		{name: "recipient all required missing", call: createRecipientWith(func(p *payments.RecipientCreateParams) {
			*p = payments.RecipientCreateParams{}
		}), fields: []string{"account_number", "account_name", "account_type", "account_currency"}},
		{name: "recipient account_number missing", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountNumber = "" }), fields: []string{"account_number"}},
		{name: "recipient account_number symbols", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountNumber = "0123;DROP" }), fields: []string{"account_number"}},
		{name: "recipient account_number too long", call: createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.AccountNumber = payments.AccountNumber(strings.Repeat("1", 35))
		}), fields: []string{"account_number"}},
		{name: "recipient account_name blank", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountName = "   " }), fields: []string{"account_name"}},
		{name: "recipient account_name control", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountName = "Ada\x00" }), fields: []string{"account_name"}},
		{name: "recipient account_name bad UTF-8", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountName = "Ada\xff" }), fields: []string{"account_name"}},
		{name: "recipient account_type missing", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountType = "" }), fields: []string{"account_type"}},
		{name: "recipient account_type unknown", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountType = "sole_trader" }), fields: []string{"account_type"}},
		{name: "recipient account_currency missing", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountCurrency = "" }), fields: []string{"account_currency"}},
		{name: "recipient account_currency lower case", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountCurrency = "ngn" }), fields: []string{"account_currency"}},
		{name: "recipient account_currency two letters", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AccountCurrency = "NG" }), fields: []string{"account_currency"}},
		{name: "recipient amount_limit zero", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AmountLimit = amountPtr("0") }), fields: []string{"amount_limit"}},
		{name: "recipient amount_limit negative", call: createRecipientWith(func(p *payments.RecipientCreateParams) { p.AmountLimit = amountPtr("-1") }), fields: []string{"amount_limit"}},
		{name: "recipient image not base64", call: createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.Identification = &payments.Identification{Type: payments.IdentificationPassport, Number: "A123", Image: "not base64!"}
		}), fields: []string{"identification.identification_image"}},
		{name: "recipient image url-safe alphabet", call: createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.Identification = &payments.Identification{Image: "-_-_"}
		}), fields: []string{"identification.identification_image"}},
		{name: "recipient image bad padding", call: createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.Identification = &payments.Identification{Image: "aGVsbG8"}
		}), fields: []string{"identification.identification_image"}},
		{name: "recipient identification number control", call: createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.Identification = &payments.Identification{Number: "A1\n23"}
		}), fields: []string{"identification.identification_number"}},
		{name: "recipient payment details", call: createRecipientWith(func(p *payments.RecipientCreateParams) {
			p.PaymentDetails = &payments.PaymentDetails{AccountNumber: "12/34", SwiftCode: "AB\tCD"}
		}), fields: []string{"payment_details.account_number", "payment_details.swift_code"}},

		// Recipients.Update: the id is a UUID, so nothing can inject a path.
		{name: "update id empty", call: updateRecipientWith("", &payments.RecipientUpdateParams{AccountName: "A"}), fields: []string{"id"}},
		{name: "update id traversal", call: updateRecipientWith("../x", &payments.RecipientUpdateParams{AccountName: "A"}), fields: []string{"id"}},
		{name: "update id slash", call: updateRecipientWith("a/b", &payments.RecipientUpdateParams{AccountName: "A"}), fields: []string{"id"}},
		{name: "update id not a UUID", call: updateRecipientWith("recipient-42", &payments.RecipientUpdateParams{AccountName: "A"}), fields: []string{"id"}},
		{name: "update id with query", call: updateRecipientWith(recipientUUID+"?x=1", &payments.RecipientUpdateParams{AccountName: "A"}), fields: []string{"id"}},
		{name: "update id braces", call: updateRecipientWith("{"+recipientUUID+"}", &payments.RecipientUpdateParams{AccountName: "A"}), fields: []string{"id"}},
		{name: "update id urn", call: updateRecipientWith("urn:uuid:"+recipientUUID, &payments.RecipientUpdateParams{AccountName: "A"}), fields: []string{"id"}},
		{name: "update id without dashes", call: updateRecipientWith(strings.ReplaceAll(recipientUUID, "-", ""), &payments.RecipientUpdateParams{AccountName: "A"}), fields: []string{"id"}},
		{name: "update nothing to change", call: updateRecipientWith(recipientUUID, &payments.RecipientUpdateParams{}), fields: []string{"params"}},
		{name: "update nil params", call: updateRecipientWith(recipientUUID, nil), fields: []string{"params"}},
		{name: "update bad fields", call: updateRecipientWith(recipientUUID, &payments.RecipientUpdateParams{
			AccountType: "person", AccountCurrency: "naira", AmountLimit: amountPtr("-5"), IdentificationNumber: "12\r\n34",
		}), fields: []string{"account_type", "account_currency", "amount_limit", "identification_number"}},

		// Payments.Initiate.
		{name: "initiate nil params", call: func(c *payments.Client) error {
			_, err := c.Payments.Initiate(context.Background(), nil)
			return err
		}, fields: []string{"params"}},
		{name: "initiate empty params", call: initiateWith(func(p *payments.PaymentInitiateParams) { *p = payments.PaymentInitiateParams{} }),
			fields: []string{"amount", "currency", "recipient_id", "reference"}},
		{name: "initiate amount zero", call: initiateWith(func(p *payments.PaymentInitiateParams) { p.Amount = payments.Amount{Decimal: mustDecimal("0")} }), fields: []string{"amount"}},
		{name: "initiate amount negative", call: initiateWith(func(p *payments.PaymentInitiateParams) { p.Amount = payments.Amount{Decimal: mustDecimal("-0.01")} }), fields: []string{"amount"}},
		{name: "initiate amount too large", call: initiateWith(func(p *payments.PaymentInitiateParams) {
			p.Amount = payments.Amount{Decimal: mustDecimal("1000000000000000000")}
		}), fields: []string{"amount"}},
		{name: "initiate amount too precise", call: initiateWith(func(p *payments.PaymentInitiateParams) {
			p.Amount = payments.Amount{Decimal: mustDecimal("0.0000000000000000001")}
		}), fields: []string{"amount"}},
		{name: "initiate currency", call: initiateWith(func(p *payments.PaymentInitiateParams) { p.Currency = "Naira" }), fields: []string{"currency"}},
		{name: "initiate recipient_id", call: initiateWith(func(p *payments.PaymentInitiateParams) { p.RecipientID = "../recipients" }), fields: []string{"recipient_id"}},
		{name: "initiate reference blank", call: initiateWith(func(p *payments.PaymentInitiateParams) { p.Reference = " " }), fields: []string{"reference"}},
		{name: "initiate description control", call: initiateWith(func(p *payments.PaymentInitiateParams) { p.Description = "a\x1bb" }), fields: []string{"description"}},

		// Payments.Confirm.
		{name: "confirm nil params", call: func(c *payments.Client) error {
			_, err := c.Payments.Confirm(context.Background(), nil)
			return err
		}, fields: []string{"params"}},
		{name: "confirm empty params", call: func(c *payments.Client) error {
			_, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{})
			return err
		}, fields: []string{"reference", "quote_id"}},

		// VirtualAccounts.Create.
		{name: "va nil params", call: func(c *payments.Client) error {
			_, err := c.VirtualAccounts.Create(context.Background(), nil)
			return err
		}, fields: []string{"params"}},
		{name: "va empty params", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { *p = payments.VirtualAccountCreateParams{} }),
			fields: []string{"account_type", "account_name", "email"}},
		{name: "va account_type unknown", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.AccountType = "joint" }), fields: []string{"account_type"}},
		{name: "va email missing at", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.Email = "ada.example.com" }), fields: []string{"email"}},
		{name: "va email with name", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.Email = "Ada <ada@example.com>" }), fields: []string{"email"}},
		{name: "va email with spaces", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.Email = " ada@example.com" }), fields: []string{"email"}},
		{name: "va individual without names", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.FirstName, p.LastName = "", "" }),
			fields: []string{"first_name", "last_name"}},
		{name: "va bvn ten digits", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.BVN = "1234567890" }), fields: []string{"bvn"}},
		{name: "va bvn letters", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.BVN = "1234567890A" }), fields: []string{"bvn"}},
		{name: "va Nigerian without bvn", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) {
			p.Metadata = &payments.VirtualAccountMetadata{Country: "NG"}
		}), fields: []string{"bvn"}},
		{name: "va Nigeria by name without bvn", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) {
			p.Metadata = &payments.VirtualAccountMetadata{Country: "Nigeria"}
		}), fields: []string{"bvn"}},
		{name: "va mobile", call: virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { p.MobileNumber = "call me" }), fields: []string{"mobile_number"}},

		// Webhooks.Trigger.
		{name: "trigger empty event", call: func(c *payments.Client) error {
			_, err := c.Webhooks.Trigger(context.Background(), "")
			return err
		}, fields: []string{"event_id"}},
		{name: "trigger dot-dot event", call: func(c *payments.Client) error {
			_, err := c.Webhooks.Trigger(context.Background(), "..")
			return err
		}, fields: []string{"event_id"}},
		{name: "trigger dot event", call: func(c *payments.Client) error {
			_, err := c.Webhooks.Trigger(context.Background(), ".")
			return err
		}, fields: []string{"event_id"}},
	}
}

// The bad-value tables: for every operation, the invalid values a merchant's
// code can produce, field by field, beyond the cases of validationCases.
// Each must be refused with a *ValidationError naming exactly that field,
// before anything reaches the transport, and personal data must not be
// repeated in the error.

// badValue is one wrong value for a field and what is wrong with it.
type badValue struct{ what, value string }

// Fields whose values are personal data: the error text must never show them.
var personalFields = map[string]bool{
	"account_number": true, "payment_details.account_number": true, "bvn": true,
	"identification_number": true, "identification.identification_number": true,
	"identification.identification_image": true,
}

// xs returns n letters x.
func xs(n int) string { return strings.Repeat("x", n) }

// Values every optional text field refuses, with the length bound of the
// field.
func textBads(max int) []badValue {
	return []badValue{
		{"too long", xs(max + 1)},
		{"too long in runes", strings.Repeat("é", max+1)},
		{"newline", "line one\nline two"},
		{"NUL", "nul\x00byte"},
		{"DEL", "del\x7f"},
		{"C1 control NEL", "nel\u0085"},
		{"invalid UTF-8", "bad\xc3\x28utf8"},
		{"overlong UTF-8 slash", "over\xc0\xaflong"},
	}
}

// Text bounds of validate.go.
const (
	nameMax = 255
	textMax = 1024
	codeMax = 64
)

func badAmounts() []badValue {
	return []badValue{
		{"zero with places", "0.000"},
		{"negative", "-250.00"},
		{"30 decimal places", "0.123456789012345678901234567890"},
		{"19 decimal places under 10^18", "999999999999999999.9999999999999999999"},
		{"10^18", "1e18"},
		{"over 10^18", "1000000000000000000.5"},
		{"10^30", "1e30"},
	}
}

// otherUUID is a valid id other than the one validate.go shows as an example.
const otherUUID = "8a1c4e2f-5b3d-4f6a-9c8e-7d2b1a0f3e4c"

var badIDs = []badValue{
	{"empty", ""},
	{"dot-dot", ".."},
	{"slash", "/"},
	{"encoded dot-dot", "%2e%2e"},
	{"encoded dot-dot slash", "%2e%2e%2f" + otherUUID[:27]},
	{"UUID then traversal", otherUUID + "/.."},
	{"slash instead of a dash", strings.Replace(otherUUID, "-", "/", 1)},
	{"dots at the end", otherUUID[:34] + ".."},
	{"36 letters", xs(36)},
	{"leading space", " " + otherUUID},
	{"trailing newline", otherUUID + "\n"},
	{"two UUIDs", otherUUID + otherUUID},
}

func badInputs() []validationCase {
	var cases []validationCase
	add := func(op, field string, bads []badValue, call func(v string) func(c *payments.Client) error) {
		for _, b := range bads {
			cases = append(cases, validationCase{name: op + "/" + field + "/" + b.what, call: call(b.value),
				fields: []string{field}, value: b.value, hasValue: true})
		}
	}

	// Recipients.Create.
	create := func(field string, bads []badValue, set func(p *payments.RecipientCreateParams, v string)) {
		add("Recipients.Create", field, bads, func(v string) func(c *payments.Client) error {
			return createRecipientWith(func(p *payments.RecipientCreateParams) { set(p, v) })
		})
	}
	accountNumbers := []badValue{
		{"newline", "01234\n56789"},
		{"Arabic-Indic digits", "٠١٢٣٤٥٦٧٨٩"},
		{"leading space", " 0123456789"},
		{"NUL", "0123456789\x00"},
		{"far too long", strings.Repeat("0123456789", 10)},
	}
	create("account_number", accountNumbers, func(p *payments.RecipientCreateParams, v string) { p.AccountNumber = payments.AccountNumber(v) })
	create("account_name", textBads(nameMax), func(p *payments.RecipientCreateParams, v string) { p.AccountName = v })
	create("account_type", []badValue{{"person", "person"}, {"capitalised", "Individual"}, {"padded", " individual"}},
		func(p *payments.RecipientCreateParams, v string) { p.AccountType = payments.AccountType(v) })
	create("account_currency", []badValue{{"four letters", "NGNX"}, {"symbol", "₦"}, {"with newline", "NG\n"}},
		func(p *payments.RecipientCreateParams, v string) { p.AccountCurrency = v })
	create("account_country_code", textBads(codeMax), func(p *payments.RecipientCreateParams, v string) { p.AccountCountryCode = v })
	create("account_bank_name", textBads(nameMax), func(p *payments.RecipientCreateParams, v string) { p.AccountBankName = v })
	create("account_bank_code", textBads(codeMax), func(p *payments.RecipientCreateParams, v string) { p.AccountBankCode = v })
	create("amount_limit", badAmounts(), func(p *payments.RecipientCreateParams, v string) { p.AmountLimit = amountPtr(v) })
	create("identification.identification_type", textBads(codeMax), func(p *payments.RecipientCreateParams, v string) {
		p.Identification = &payments.Identification{Type: payments.IdentificationType(v)}
	})
	create("identification.identification_number", textBads(codeMax)[:4], func(p *payments.RecipientCreateParams, v string) {
		p.Identification = &payments.Identification{Type: payments.IdentificationPassport, Number: payments.PersonalData("A" + v)}
	})
	create("identification.identification_image", []badValue{
		{"data URI", "data:image/png;base64,iVBORw0KGgo="},
		{"spaces", "iVBO Rw0K Ggo="},
		{"only padding", "===="},
		{"truncated", "iVBORw0KGgo"},
		{"over 10 MiB", strings.Repeat("QUJD", (10<<20)/4+1)},
	}, func(p *payments.RecipientCreateParams, v string) {
		p.Identification = &payments.Identification{Type: payments.IdentificationNationalID, Image: payments.PersonalData(v)}
	})
	create("payment_details.account_number", accountNumbers, func(p *payments.RecipientCreateParams, v string) {
		p.PaymentDetails = &payments.PaymentDetails{AccountNumber: payments.AccountNumber(v)}
	})
	create("payment_details.bank_code", textBads(codeMax), func(p *payments.RecipientCreateParams, v string) {
		p.PaymentDetails = &payments.PaymentDetails{BankCode: v}
	})
	create("payment_details.bank_name", textBads(nameMax), func(p *payments.RecipientCreateParams, v string) {
		p.PaymentDetails = &payments.PaymentDetails{BankName: v}
	})
	create("payment_details.routing_number", textBads(codeMax), func(p *payments.RecipientCreateParams, v string) {
		p.PaymentDetails = &payments.PaymentDetails{RoutingNumber: v}
	})
	create("payment_details.payment_rails", textBads(codeMax), func(p *payments.RecipientCreateParams, v string) {
		p.PaymentDetails = &payments.PaymentDetails{PaymentRails: v}
	})

	// Recipients.Update: a valid change, with one badValue value.
	update := func(field string, bads []badValue, set func(p *payments.RecipientUpdateParams, v string)) {
		add("Recipients.Update", field, bads, func(v string) func(c *payments.Client) error {
			p := &payments.RecipientUpdateParams{AccountBankName: "First Bank"}
			set(p, v)
			return updateRecipientWith(recipientUUID, p)
		})
	}
	add("Recipients.Update", "id", badIDs, func(v string) func(c *payments.Client) error {
		return updateRecipientWith(v, &payments.RecipientUpdateParams{AccountName: "Ada"})
	})
	update("account_number", accountNumbers, func(p *payments.RecipientUpdateParams, v string) { p.AccountNumber = payments.AccountNumber(v) })
	update("account_name", textBads(nameMax), func(p *payments.RecipientUpdateParams, v string) { p.AccountName = v })
	update("account_type", []badValue{{"person", "person"}}, func(p *payments.RecipientUpdateParams, v string) { p.AccountType = payments.AccountType(v) })
	update("account_currency", []badValue{{"symbol", "$"}}, func(p *payments.RecipientUpdateParams, v string) { p.AccountCurrency = v })
	update("account_country_code", textBads(codeMax), func(p *payments.RecipientUpdateParams, v string) { p.AccountCountryCode = v })
	update("account_bank_code", textBads(codeMax), func(p *payments.RecipientUpdateParams, v string) { p.AccountBankCode = v })
	update("amount_limit", badAmounts(), func(p *payments.RecipientUpdateParams, v string) { p.AmountLimit = amountPtr(v) })
	update("identification_type", textBads(codeMax), func(p *payments.RecipientUpdateParams, v string) {
		p.IdentificationType = payments.IdentificationType(v)
	})
	update("identification_number", textBads(codeMax)[:4], func(p *payments.RecipientUpdateParams, v string) {
		p.IdentificationNumber = payments.PersonalData("NIN" + v)
	})
	update("payment_details.account_number", accountNumbers, func(p *payments.RecipientUpdateParams, v string) {
		p.PaymentDetails = &payments.PaymentDetails{AccountNumber: payments.AccountNumber(v)}
	})

	// Payments.Initiate.
	initiate := func(field string, bads []badValue, set func(p *payments.PaymentInitiateParams, v string)) {
		add("Payments.Initiate", field, bads, func(v string) func(c *payments.Client) error {
			return initiateWith(func(p *payments.PaymentInitiateParams) { set(p, v) })
		})
	}
	initiate("amount", badAmounts(), func(p *payments.PaymentInitiateParams, v string) { p.Amount = payments.Amount{Decimal: mustDecimal(v)} })
	initiate("currency", []badValue{{"empty", ""}, {"lower case", "usd"}, {"symbol", "$"}}, func(p *payments.PaymentInitiateParams, v string) { p.Currency = v })
	initiate("recipient_id", badIDs, func(p *payments.PaymentInitiateParams, v string) { p.RecipientID = v })
	initiate("reference", append(textBads(nameMax), badValue{"empty", ""}), func(p *payments.PaymentInitiateParams, v string) { p.Reference = v })
	initiate("description", textBads(textMax), func(p *payments.PaymentInitiateParams, v string) { p.Description = v })
	initiate("transaction_type", textBads(codeMax), func(p *payments.PaymentInitiateParams, v string) { p.TransactionType = v })
	initiate("transaction_category", textBads(codeMax), func(p *payments.PaymentInitiateParams, v string) { p.TransactionCategory = v })
	initiate("transaction_tags", textBads(textMax), func(p *payments.PaymentInitiateParams, v string) { p.TransactionTags = v })
	initiate("transaction_notes", textBads(textMax), func(p *payments.PaymentInitiateParams, v string) { p.TransactionNotes = v })
	initiate("channel", textBads(codeMax), func(p *payments.PaymentInitiateParams, v string) { p.Channel = v })
	initiate("sub_type", textBads(codeMax), func(p *payments.PaymentInitiateParams, v string) { p.SubType = v })

	// Payments.Confirm.
	confirm := func(field string, bads []badValue, set func(p *payments.PaymentConfirmParams, v string)) {
		add("Payments.Confirm", field, bads, func(v string) func(c *payments.Client) error {
			return func(c *payments.Client) error {
				p := &payments.PaymentConfirmParams{Reference: "order-1", QuoteID: quoteUUID}
				set(p, v)
				_, err := c.Payments.Confirm(context.Background(), p)
				return err
			}
		})
	}
	blank := []badValue{{"empty", ""}, {"blank", " \t "}}
	confirm("reference", append(textBads(nameMax), blank...), func(p *payments.PaymentConfirmParams, v string) { p.Reference = v })
	confirm("quote_id", append(textBads(255), blank...), func(p *payments.PaymentConfirmParams, v string) { p.QuoteID = v })

	// VirtualAccounts.Create.
	va := func(field string, bads []badValue, set func(p *payments.VirtualAccountCreateParams, v string)) {
		add("VirtualAccounts.Create", field, bads, func(v string) func(c *payments.Client) error {
			return virtualAccountWith(func(p *payments.VirtualAccountCreateParams) { set(p, v) })
		})
	}
	va("account_type", []badValue{{"person", "person"}, {"empty", ""}}, func(p *payments.VirtualAccountCreateParams, v string) {
		p.AccountType = payments.AccountType(v)
		p.FirstName, p.LastName = "", "" // a business-shaped request: only the type is wrong
	})
	va("account_name", append(textBads(nameMax), blank...), func(p *payments.VirtualAccountCreateParams, v string) { p.AccountName = v })
	va("email", []badValue{
		{"no domain", "a@"},
		{"no local part", "@b"},
		{"space in local part", "a b@c.d"},
		{"display name", "Ada <a@b.c>"},
		{"angle brackets", "<ada@example.com>"},
		{"two at signs", "a@b@c.d"},
		{"two addresses", "ada@example.com, bob@example.com"},
		{"trailing newline", "ada@example.com\n"},
		{"very long", strings.Repeat("a", 250) + "@example.com"},
		{"blank", "   "},
	}, func(p *payments.VirtualAccountCreateParams, v string) { p.Email = payments.PersonalData(v) })
	va("first_name", append(textBads(nameMax), blank...), func(p *payments.VirtualAccountCreateParams, v string) { p.FirstName = v })
	va("last_name", append(textBads(nameMax), blank...), func(p *payments.VirtualAccountCreateParams, v string) { p.LastName = v })
	va("display_name", textBads(nameMax), func(p *payments.VirtualAccountCreateParams, v string) { p.DisplayName = v })
	va("bvn", []badValue{
		{"10 digits", "1234567890"},
		{"12 digits", "123456789012"},
		{"letters", "12345abcde1"},
		{"grouped", "123 4567 8901"},
		{"Arabic-Indic digits", "١٢٣٤٥٦٧٨٩٠١"},
		{"newline", "12345678901\n"},
	}, func(p *payments.VirtualAccountCreateParams, v string) {
		p.BVN = payments.PersonalData(v)
		p.Metadata = &payments.VirtualAccountMetadata{Country: "NG"}
	})
	va("mobile_number", []badValue{{"too short", "+2348"}, {"letters", "+234 80x 000 0000"}, {"newline", "+2348000000000\n"}},
		func(p *payments.VirtualAccountCreateParams, v string) { p.MobileNumber = payments.PersonalData(v) })
	va("metadata.business_reg_number", textBads(codeMax), func(p *payments.VirtualAccountCreateParams, v string) {
		p.Metadata = &payments.VirtualAccountMetadata{BusinessRegNumber: v}
	})
	va("metadata.country", textBads(codeMax), func(p *payments.VirtualAccountCreateParams, v string) {
		p.Metadata = &payments.VirtualAccountMetadata{Country: v}
	})
	va("metadata.use_case", textBads(textMax), func(p *payments.VirtualAccountCreateParams, v string) {
		p.Metadata = &payments.VirtualAccountMetadata{UseCase: v}
	})
	va("metadata.reference", textBads(nameMax), func(p *payments.VirtualAccountCreateParams, v string) {
		p.Metadata = &payments.VirtualAccountMetadata{Reference: v}
	})

	// Webhooks.Trigger.
	add("Webhooks.Trigger", "event_id", append(textBads(128), blank...), func(v string) func(c *payments.Client) error {
		return func(c *payments.Client) error {
			_, err := c.Webhooks.Trigger(context.Background(), payments.EventType(v))
			return err
		}
	})

	// Client.Do.
	add("Client.Do", "method", []badValue{{"empty", ""}, {"lower case", "get"}, {"CONNECT", "CONNECT"}, {"with space", "GET "}},
		func(v string) func(c *payments.Client) error {
			return func(c *payments.Client) error {
				_, err := c.Do(context.Background(), v, "/payments/recipients", nil, nil)
				return err
			}
		})
	add("Client.Do", "path", []badValue{
		{"empty", ""},
		{"encoded dot-dot", "/payments/%2e%2e/admin"},
		{"encoded upper-case dot-dot", "/payments/%2E%2E"},
		{"encoded dot", "/%2e/payments"},
		{"dot-dot with encoded slash", "/payments/..%2fadmin"},
		{"trailing dot-dot", "/payments/recipients/.."},
		{"NUL", "/payments\x00"},
		{"tab", "/payments\trecipients"},
		{"DEL", "/payments\x7f"},
		{"scheme without slashes", "http:/payments"},
	}, func(v string) func(c *payments.Client) error {
		return func(c *payments.Client) error {
			_, err := c.Do(context.Background(), http.MethodGet, v, nil, nil)
			return err
		}
	})
	return cases
}

// TestValidationRefusesBeforeSending runs both tables: the cases of
// validationCases (required fields, several bad fields at once) and the
// bad-value tables of badInputs (every invalid value, field by field).
func TestValidationRefusesBeforeSending(t *testing.T) {
	cases := append(validationCases(), badInputs()...)
	seen := map[string]bool{}
	for _, tc := range cases {
		require.False(t, seen[tc.name], "duplicate case %s", tc.name)
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			err := tc.call(h.client)
			require.Error(t, err)
			var verr *payments.ValidationError
			require.ErrorAs(t, err, &verr, "%v", err)
			assert.ErrorIs(t, err, payments.ErrInvalidParams)

			got := make([]string, 0, len(verr.Fields))
			for _, f := range verr.Fields {
				got = append(got, f.Field)
				assert.NotEmpty(t, f.Message)
				assert.Contains(t, err.Error(), f.Field+": "+f.Message)
			}
			want := append([]string(nil), tc.fields...)
			sort.Strings(got)
			sort.Strings(want)
			assert.Equal(t, want, got, "every bad field, and only those, at once")
			for _, f := range tc.fields {
				assert.True(t, verr.Has(f), f)
			}

			text := err.Error()
			if tc.hasValue && personalFields[tc.fields[0]] {
				require.NotEmpty(t, tc.value)
				assert.NotContains(t, text, strings.TrimSpace(tc.value), "personal data repeated in the error")
			}
			if len(tc.value) >= 8 {
				assert.NotContains(t, text, tc.value, "the value is repeated in the error")
			}

			assert.Zero(t, h.calls(), "nothing is sent")
			_, hasKey := payments.IdempotencyKeyOf(err)
			assert.False(t, hasKey)
		})
	}
	assert.Greater(t, len(cases), 250)
}

func TestValidationAcceptsValidParams(t *testing.T) {
	h := newHarness(t)
	h.on("POST", "/payments/recipients", echoRecipient(201))
	h.on("POST", "/accounts/virtual-accounts", jsonResponder(200, okEnvelope(virtualAccountJSON)))
	ctx := context.Background()

	p := validRecipientParams()
	p.AccountNumber = "GB29 NWBK 6016 1331 9268 19"
	p.AccountCountryCode = "Nigeria"
	p.Identification = &payments.Identification{Type: "drivers_licence", Number: "DL-778", Image: "iVBORw0KGgo="}
	p.AmountLimit = amountPtr("0.000000000000000001")
	_, err := h.client.Recipients.Create(ctx, p)
	require.NoError(t, err)

	for _, va := range []*payments.VirtualAccountCreateParams{
		{AccountType: payments.AccountTypeIndividual, AccountName: "Ada", Email: "ada+pay@example.co.uk", FirstName: "Ada", LastName: "O",
			BVN: "12345678901", Metadata: &payments.VirtualAccountMetadata{Country: "ng"}},
		{AccountType: payments.AccountTypeBusiness, AccountName: "Acme", Email: "ops@acme.example"},
		{AccountType: payments.AccountTypeBusiness, AccountName: "Acme GH", Email: "ops@acme.example",
			Metadata: &payments.VirtualAccountMetadata{Country: "GH"}},
	} {
		_, err := h.client.VirtualAccounts.Create(ctx, va)
		require.NoError(t, err)
	}
	assert.Equal(t, 4, h.calls())
}

func TestValidationReportsManyFieldsAtOnce(t *testing.T) {
	h := newHarness(t)
	_, err := h.client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual,
		Email:       "not-an-email",
		BVN:         "123",
		Metadata:    &payments.VirtualAccountMetadata{Country: "NG"},
	})
	var verr *payments.ValidationError
	require.ErrorAs(t, err, &verr)
	for _, f := range []string{"account_name", "email", "first_name", "last_name", "bvn"} {
		assert.True(t, verr.Has(f), "%s missing from %v", f, verr)
	}
	assert.Zero(t, h.calls())
}

func TestValidationNeverEchoesPersonalData(t *testing.T) {
	const (
		bvn      = "98765432101x" // 12 characters: invalid
		idNumber = "PASS\x01PORT-77341"
		image    = "SECRETIMAGEDATA$$$"
	)
	h := newHarness(t)
	_, err := h.client.VirtualAccounts.Create(context.Background(), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeBusiness, AccountName: "Acme", Email: "ops@acme.example", BVN: bvn,
	})
	var verr *payments.ValidationError
	require.ErrorAs(t, err, &verr)
	assert.True(t, verr.Has("bvn"))
	assert.NotContains(t, err.Error(), bvn)
	assert.NotContains(t, err.Error(), "98765432101")

	p := validRecipientParams()
	p.AccountNumber = ""
	p.Identification = &payments.Identification{Type: payments.IdentificationPassport, Number: idNumber, Image: image}
	_, err = h.client.Recipients.Create(context.Background(), p)
	require.ErrorAs(t, err, &verr)
	assert.True(t, verr.Has("identification.identification_number"))
	assert.True(t, verr.Has("identification.identification_image"))
	assert.NotContains(t, err.Error(), "PORT-77341")
	assert.NotContains(t, err.Error(), "SECRETIMAGE")

	_, err = h.client.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{
		IdentificationNumber: idNumber,
	})
	require.ErrorAs(t, err, &verr)
	assert.NotContains(t, err.Error(), "PORT-77341")
	assert.Zero(t, h.calls())
}

// TestBoundsAreInclusive shows that each bound of the table above is the
// first refused value, not one too early: every value exactly at a bound is
// accepted and sent, as its exact digits for amounts.
func TestBoundsAreInclusive(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", echoRecipient(201))
	h.on(http.MethodPost, "/payments/initiate", echoInitiate)
	h.on(http.MethodPost, "/accounts/virtual-accounts", jsonResponder(200, okEnvelope(virtualAccountJSON)))
	h.on(http.MethodPost, "/webhooks/events/trigger/"+strings.Repeat("e", 128), jsonResponder(204, ""))
	ctx := context.Background()

	rp := validRecipientParams()
	rp.AccountNumber = "GB29NWBK6016133192681912345678901X" // 34, the longest IBAN
	rp.AccountName = strings.Repeat("é", nameMax)
	rp.AccountBankCode = xs(codeMax)
	rp.AmountLimit = amountPtr("999999999999999999.999999999999999999")
	rp.Identification = &payments.Identification{Number: payments.PersonalData(xs(codeMax)), Image: payments.PersonalData(strings.Repeat("QUJD", (10<<20)/4))}
	_, err := h.client.Recipients.Create(ctx, rp)
	require.NoError(t, err)

	for _, a := range []struct {
		amount decimal.Decimal
		sent   string
	}{
		{mustDecimal("0.000000000000000001"), "0.000000000000000001"},
		{mustDecimal("999999999999999999.999999999999999999"), "999999999999999999.999999999999999999"},
		// 100 held with 20 places, as the product of two amounts with ten
		// places each is: its value has no decimal places, and it is sent
		// as 100.
		{mustDecimal("100.0000000000").Mul(mustDecimal("1.0000000000")), "100"},
	} {
		ip := validInitiateParams()
		ip.Amount = payments.Amount{Decimal: a.amount}
		ip.Description = xs(textMax)
		ip.Reference = xs(nameMax)
		_, err = h.client.Payments.Initiate(ctx, ip)
		require.NoError(t, err, "amount %s", a.sent)
		reqs := h.requests()
		assert.Contains(t, string(reqs[len(reqs)-1].Body), `"amount":`+a.sent+`,`)
	}

	vp := validVirtualAccountParams()
	vp.Email = payments.PersonalData(strings.Repeat("a", 64) + "@" + strings.Repeat("b", 185) + ".com") // 254 characters
	require.Len(t, vp.Email, 254)
	vp.BVN = "12345678901"
	vp.Metadata = &payments.VirtualAccountMetadata{Country: "NG", UseCase: xs(textMax)}
	_, err = h.client.VirtualAccounts.Create(ctx, vp)
	require.NoError(t, err)

	_, err = h.client.Webhooks.Trigger(ctx, payments.EventType(strings.Repeat("e", 128)))
	require.NoError(t, err)
	assert.Equal(t, 6, h.calls())
}

// FuzzAmount parses arbitrary text as an amount, as a merchant's code would
// from its own input, and initiates a payment with it. Validation accepts
// exactly the amounts the service can be sent: greater than zero, below
// 10^18, at most 18 decimal places as written on the wire. An accepted
// amount is sent as the JSON number d.String(), digit for digit, and reads
// back as an equal decimal; a refused one gives a *ValidationError naming
// only "amount", and nothing is sent. amount_limit is encoded the same way.
func FuzzAmount(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		d, err := decimal.NewFromString(s)
		if err != nil {
			return
		}
		// The service answers for the amount sent (Initiate checks it does).
		a := fzAnswerFor(http.StatusOK, "application/json",
			[]byte(okEnvelope(strings.ReplaceAll(paymentJSON, `"15000.50"`, `"`+d.String()+`"`))))
		params := validInitiateParams()
		params.Amount = payments.Amount{Decimal: d}
		_, err = fzClient(t, a).Payments.Initiate(context.Background(), params)

		wire := d.String()
		intPart, frac, _ := strings.Cut(strings.TrimPrefix(wire, "-"), ".")
		valid := !strings.HasPrefix(wire, "-") && wire != "0" && len(intPart) <= 18 && len(frac) <= 18

		var verr *payments.ValidationError
		switch {
		case errors.As(err, &verr):
			if len(verr.Fields) != 1 || !verr.Has("amount") {
				t.Fatalf("amount %q: the error names %v, want only amount", s, verr.Fields)
			}
			if a.calls != 0 {
				t.Fatalf("amount %q was refused but sent", s)
			}
			if valid {
				t.Fatalf("amount %q (sent as %s) was refused: %v", s, wire, err)
			}
		case err != nil:
			t.Fatalf("amount %q: %v", s, err)
		default:
			if !valid {
				t.Fatalf("amount %q (sent as %s) was accepted", s, wire)
			}
			fzCheckToken(t, a.sent, "amount", d)
		}

		if valid {
			ra := fzAnswerFor(http.StatusCreated, "application/json", []byte(recipientLimitAnswer(d.String()))) // the limit echoed
			rp := validRecipientParams()
			rp.AmountLimit = &payments.Amount{Decimal: d}
			if _, err := fzClient(t, ra).Recipients.Create(context.Background(), rp); err != nil {
				t.Fatalf("amount_limit %q: %v", s, err)
			}
			fzCheckToken(t, ra.sent, "amount_limit", d)
		}
	})
}

// fzCheckToken checks that member name of the JSON object body is the number
// d.String(), exactly, and decodes to a decimal equal to d.
func fzCheckToken(t *testing.T, body []byte, name string, d decimal.Decimal) {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		t.Fatalf("the body %s is not a JSON object: %v", body, err)
	}
	tok := string(members[name])
	if tok != d.String() {
		t.Fatalf("%s is sent as %s, want %s", name, tok, d.String())
	}
	back, err := decimal.NewFromString(tok)
	if err != nil || !back.Equal(d) {
		t.Fatalf("%s %s reads back as %v (%v), want %v", name, tok, back, err, d)
	}
}
