package payments_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// The bad-input table: for every operation, the invalid values a merchant's
// code can produce, field by field, beyond the cases of validate_test.go.
// Each must be refused with a *ValidationError naming exactly that field,
// before anything reaches the transport, and personal data must not be
// repeated in the error.

// badInput is one call that must be refused for one field.
type badInput struct {
	name  string // operation/field/what is wrong
	field string
	value string // the offending value, checked against the error text
	call  func(c *payments.Client) error
}

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

func badInputs() []badInput {
	var cases []badInput
	add := func(op, field string, bads []badValue, call func(v string) func(c *payments.Client) error) {
		for _, b := range bads {
			cases = append(cases, badInput{op + "/" + field + "/" + b.what, field, b.value, call(b.value)})
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
	create("account_number", accountNumbers, func(p *payments.RecipientCreateParams, v string) { p.AccountNumber = v })
	create("account_name", textBads(nameMax), func(p *payments.RecipientCreateParams, v string) { p.AccountName = v })
	create("account_type", []badValue{{"person", "person"}, {"capitalised", "Individual"}, {"padded", " individual"}},
		func(p *payments.RecipientCreateParams, v string) { p.AccountType = payments.AccountType(v) })
	create("account_currency", []badValue{{"four letters", "NGNX"}, {"symbol", "₦"}, {"with newline", "NG\n"}},
		func(p *payments.RecipientCreateParams, v string) { p.AccountCurrency = v })
	create("account_country_code", textBads(codeMax), func(p *payments.RecipientCreateParams, v string) { p.AccountCountryCode = v })
	create("account_bank_name", textBads(nameMax), func(p *payments.RecipientCreateParams, v string) { p.AccountBankName = v })
	create("account_bank_code", textBads(codeMax), func(p *payments.RecipientCreateParams, v string) { p.AccountBankCode = v })
	create("amount_limit", badAmounts(), func(p *payments.RecipientCreateParams, v string) { p.AmountLimit = decimalPtr(v) })
	create("identification.identification_type", textBads(codeMax), func(p *payments.RecipientCreateParams, v string) {
		p.Identification = &payments.Identification{Type: payments.IdentificationType(v)}
	})
	create("identification.identification_number", textBads(codeMax)[:4], func(p *payments.RecipientCreateParams, v string) {
		p.Identification = &payments.Identification{Type: payments.IdentificationPassport, Number: "A" + v}
	})
	create("identification.identification_image", []badValue{
		{"data URI", "data:image/png;base64,iVBORw0KGgo="},
		{"spaces", "iVBO Rw0K Ggo="},
		{"only padding", "===="},
		{"truncated", "iVBORw0KGgo"},
		{"over 10 MiB", strings.Repeat("QUJD", (10<<20)/4+1)},
	}, func(p *payments.RecipientCreateParams, v string) {
		p.Identification = &payments.Identification{Type: payments.IdentificationNationalID, Image: v}
	})
	create("payment_details.account_number", accountNumbers, func(p *payments.RecipientCreateParams, v string) {
		p.PaymentDetails = &payments.PaymentDetails{AccountNumber: v}
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
	update("account_number", accountNumbers, func(p *payments.RecipientUpdateParams, v string) { p.AccountNumber = v })
	update("account_name", textBads(nameMax), func(p *payments.RecipientUpdateParams, v string) { p.AccountName = v })
	update("account_type", []badValue{{"person", "person"}}, func(p *payments.RecipientUpdateParams, v string) { p.AccountType = payments.AccountType(v) })
	update("account_currency", []badValue{{"symbol", "$"}}, func(p *payments.RecipientUpdateParams, v string) { p.AccountCurrency = v })
	update("account_country_code", textBads(codeMax), func(p *payments.RecipientUpdateParams, v string) { p.AccountCountryCode = v })
	update("account_bank_code", textBads(codeMax), func(p *payments.RecipientUpdateParams, v string) { p.AccountBankCode = v })
	update("amount_limit", badAmounts(), func(p *payments.RecipientUpdateParams, v string) { p.AmountLimit = decimalPtr(v) })
	update("identification_type", textBads(codeMax), func(p *payments.RecipientUpdateParams, v string) {
		p.IdentificationType = payments.IdentificationType(v)
	})
	update("identification_number", textBads(codeMax)[:4], func(p *payments.RecipientUpdateParams, v string) {
		p.IdentificationNumber = "NIN" + v
	})
	update("payment_details.account_number", accountNumbers, func(p *payments.RecipientUpdateParams, v string) {
		p.PaymentDetails = &payments.PaymentDetails{AccountNumber: v}
	})

	// Payments.Initiate.
	initiate := func(field string, bads []badValue, set func(p *payments.PaymentInitiateParams, v string)) {
		add("Payments.Initiate", field, bads, func(v string) func(c *payments.Client) error {
			return initiateWith(func(p *payments.PaymentInitiateParams) { set(p, v) })
		})
	}
	initiate("amount", badAmounts(), func(p *payments.PaymentInitiateParams, v string) { p.Amount = mustDecimal(v) })
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
	}, func(p *payments.VirtualAccountCreateParams, v string) { p.Email = v })
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
		p.BVN = v
		p.Metadata = &payments.VirtualAccountMetadata{Country: "NG"}
	})
	va("mobile_number", []badValue{{"too short", "+2348"}, {"letters", "+234 80x 000 0000"}, {"newline", "+2348000000000\n"}},
		func(p *payments.VirtualAccountCreateParams, v string) { p.MobileNumber = v })
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

func TestBadInputIsRefusedBeforeSending(t *testing.T) {
	h := newHarness(t)
	cases := badInputs()
	seen := map[string]bool{}
	for _, tc := range cases {
		require.False(t, seen[tc.name], "duplicate case %s", tc.name)
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(h.client)
			var verr *payments.ValidationError
			require.ErrorAs(t, err, &verr, "%v", err)
			assert.ErrorIs(t, err, payments.ErrInvalidParams)
			fields := make([]string, 0, len(verr.Fields))
			for _, f := range verr.Fields {
				fields = append(fields, f.Field)
			}
			assert.Equal(t, []string{tc.field}, fields, "exactly the bad field is named")
			assert.True(t, verr.Has(tc.field))

			text := err.Error()
			if personalFields[tc.field] {
				require.NotEmpty(t, tc.value)
				assert.NotContains(t, text, strings.TrimSpace(tc.value), "personal data repeated in the error")
			}
			if len(tc.value) >= 8 {
				assert.NotContains(t, text, tc.value, "the value is repeated in the error")
			}
			assert.Zero(t, h.calls(), "nothing may be sent")
		})
	}
	assert.Greater(t, len(cases), 250)
}

// TestBadRequestOptionsAreRefusedOnEveryOperation checks that no operation
// sends a request whose per-call options are bad (an idempotency key that
// is not printable ASCII, a header value with a NUL, a bad header name).
func TestBadRequestOptionsAreRefusedOnEveryOperation(t *testing.T) {
	h := newHarness(t)
	ops := map[string]func(c *payments.Client, opts ...payments.RequestOption) error{
		"Recipients.Create": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Recipients.Create(context.Background(), validRecipientParams(), opts...)
			return err
		},
		"Recipients.Update": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{AccountName: "Ada"}, opts...)
			return err
		},
		"Payments.Initiate": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Payments.Initiate(context.Background(), validInitiateParams(), opts...)
			return err
		},
		"Payments.Confirm": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Payments.Confirm(context.Background(), &payments.PaymentConfirmParams{Reference: "r", QuoteID: quoteUUID}, opts...)
			return err
		},
		"VirtualAccounts.Create": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.VirtualAccounts.Create(context.Background(), validVirtualAccountParams(), opts...)
			return err
		},
		"Webhooks.Trigger": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Webhooks.Trigger(context.Background(), payments.EventPaymentCompleted, opts...)
			return err
		},
		"Client.Do": func(c *payments.Client, opts ...payments.RequestOption) error {
			_, err := c.Do(context.Background(), http.MethodPost, "/reports", map[string]string{"a": "b"}, nil, opts...)
			return err
		},
	}
	options := []struct {
		name, field string
		opt         payments.RequestOption
	}{
		{"non-ASCII key", "Idempotency-Key", payments.WithIdempotencyKey("ключ-1")},
		{"key with tab", "Idempotency-Key", payments.WithIdempotencyKey("order\t1")},
		{"header value with NUL", "header X-Trace", payments.WithHeader("X-Trace", "a\x00b")},
		{"header name with colon", "header X-Trace:", payments.WithHeader("X-Trace:", "a")},
	}
	for name, op := range ops {
		for _, o := range options {
			t.Run(name+"/"+o.name, func(t *testing.T) {
				err := op(h.client, o.opt)
				var verr *payments.ValidationError
				require.ErrorAs(t, err, &verr)
				assert.True(t, verr.Has(o.field), verr.Error())
			})
		}
	}
	assert.Zero(t, h.calls())
}

// TestBoundsAreInclusive shows that each bound of the table above is the
// first refused value, not one too early: every value exactly at a bound is
// accepted and sent, as its exact digits for amounts.
func TestBoundsAreInclusive(t *testing.T) {
	h := newHarness(t)
	h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, okEnvelope(recipientJSON)))
	h.on(http.MethodPost, "/payments/initiate", jsonResponder(200, okEnvelope(paymentJSON)))
	h.on(http.MethodPost, "/accounts/virtual-accounts", jsonResponder(200, okEnvelope(virtualAccountJSON)))
	h.on(http.MethodPost, "/webhooks/events/trigger/"+strings.Repeat("e", 128), jsonResponder(204, ""))
	ctx := context.Background()

	rp := validRecipientParams()
	rp.AccountNumber = "GB29NWBK6016133192681912345678901X" // 34, the longest IBAN
	rp.AccountName = strings.Repeat("é", nameMax)
	rp.AccountBankCode = xs(codeMax)
	rp.AmountLimit = decimalPtr("999999999999999999.999999999999999999")
	rp.Identification = &payments.Identification{Number: xs(codeMax), Image: strings.Repeat("QUJD", (10<<20)/4)}
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
		ip.Amount = a.amount
		ip.Description = xs(textMax)
		ip.Reference = xs(nameMax)
		_, err = h.client.Payments.Initiate(ctx, ip)
		require.NoError(t, err, "amount %s", a.sent)
		reqs := h.requests()
		assert.Contains(t, string(reqs[len(reqs)-1].Body), `"amount":`+a.sent+`,`)
	}

	vp := validVirtualAccountParams()
	vp.Email = strings.Repeat("a", 64) + "@" + strings.Repeat("b", 185) + ".com" // 254 characters
	require.Len(t, vp.Email, 254)
	vp.BVN = "12345678901"
	vp.Metadata = &payments.VirtualAccountMetadata{Country: "NG", UseCase: xs(textMax)}
	_, err = h.client.VirtualAccounts.Create(ctx, vp)
	require.NoError(t, err)

	_, err = h.client.Webhooks.Trigger(ctx, payments.EventType(strings.Repeat("e", 128)))
	require.NoError(t, err)
	assert.Equal(t, 6, h.calls())
}
