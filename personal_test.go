package payments_test

import (
	"bytes"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/webhook"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Values of personal data used across these tests: each must come back from
// an encoding whole, and never be printed or logged.
const (
	rtAccount   = "0123456789"
	rtAccount2  = "9900112233"
	rtIDNumber  = "A98765432Z"
	rtImage     = "aW1hZ2UtYnl0ZXMtb2YtYS1wYXNzcG9ydA=="
	rtBVN       = "22233344455"
	rtEmail     = "ada@merchant.example"
	rtMobile    = "+2348012345678"
	rtPayerAcct = "5566778899"
)

// rtTime is a time that survives JSON and gob exactly (UTC, no monotonic
// reading).
var rtTime = time.Date(2025, 3, 1, 10, 5, 7, 123000000, time.UTC)

// rtAmount is an amount whose representation survives a round trip as is
// (decimal.Decimal.String drops trailing zeros: 15000.50 comes back as
// 15000.5, the same value, which TestAmountEncodesAsAJSONNumber checks).
func rtAmount(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// roundTripCases are full values, every exported field set (personal data
// included), of every data type of the public packages. notData names the
// exported types that are not data, with why they have no case.
func roundTripCases() map[string]any {
	surprise := payments.Surprise{Kind: payments.SurpriseUnknownField, Detail: "completed_at"}
	id := &payments.Identification{Type: payments.IdentificationPassport, Number: rtIDNumber, Image: rtImage}
	details := &payments.PaymentDetails{AccountNumber: rtAccount2, BankCode: "058", BankName: "GTBank",
		RoutingNumber: "021000021", SwiftCode: "GTBINGLA", PaymentRails: "nip"}
	limit := rtAmount("250000.75")
	quote := &payments.Quote{QuoteID: "q-1", Amount: rtAmount("15000.5"), Fee: rtAmount("225.01"),
		ExchangeRate: rtAmount("1.25"), TotalAmount: rtAmount("15225.51"), Currency: "NGN", ExpiresAt: rtTime}
	resp := &payments.Response{StatusCode: 201, Header: http.Header{"Idempotent-Replayed": {"true"}}, Stan: "000123",
		Message: "Recipient created", IdempotencyKey: "key-1", Attempts: 2, Replayed: true,
		Body: []byte(`{"success":true,"data":{"account_number":"` + rtAccount + `"}}`)}
	event := &payments.Event{ID: "evt-1", Type: payments.EventRecipientCreated, CreatedAt: rtTime,
		Data: json.RawMessage(`{"account_number":"` + rtAccount + `"}`)}
	op := payments.Operation{Name: "payments.initiate", Method: http.MethodPost, PathTemplate: "/payments/initiate"}
	conflict := &outcome.ConflictError{Kind: outcome.KindPayment, ID: "p-1", FirstState: outcome.StateCompleted,
		FirstEvent: "evt-1", SecondState: outcome.StateFailed, SecondEvent: "evt-2"}
	step := outcome.Step{EventID: "evt-1", EventType: payments.EventPaymentCompleted, EventCreatedAt: rtTime,
		RecordedAt: rtTime.Add(time.Second), State: outcome.StateCompleted, Status: "completed",
		Effect: outcome.EffectForward, IsCompleted: true, IsReversed: true}
	oc := outcome.Outcome{Kind: outcome.KindPayment, ID: "p-1", Reference: "order-1042", State: outcome.StateCompleted,
		IsCompleted: true, IsReversed: true, FirstSeen: rtTime, ConfirmedAt: rtTime.Add(time.Minute),
		Steps: []outcome.Step{step}, DroppedSteps: 7, Conflict: conflict}
	checkpoint := webhook.Checkpoint{ID: "evt-9", CreatedAt: rtTime}

	return map[string]any{
		"payments.AccountNumber": payments.AccountNumber(rtAccount),
		"payments.AccountType":   payments.AccountTypeBusiness,
		"payments.Amount":        payments.Amount{Decimal: rtAmount("15000.55")},
		"payments.APIError": payments.APIError{StatusCode: 422, Message: "the NGN balance is low", Stan: "000124",
			Code: payments.CodeInsufficientBalance, Errors: []payments.FieldError{{Field: "amount", Message: "too large"}},
			Body: []byte(`{"account_number":"` + rtAccount + `"}`), Header: http.Header{"X-Request-Id": {"r-1"}},
			IdempotencyKey: "key-2", Attempts: 1, BudgetExhausted: true, Replayed: true},
		"payments.Attempt":   payments.Attempt{Operation: op, Number: 2, IdempotencyKey: "key-3"},
		"payments.ErrorCode": payments.CodeQuoteExpired,
		"payments.Event":     *event,
		"payments.EventListParams": payments.EventListParams{Since: rtTime, After: "evt-1",
			Types: []payments.EventType{payments.EventPaymentCompleted}, Limit: 20},
		"payments.EventPage":          payments.EventPage{Events: []*payments.Event{event}, HasMore: true},
		"payments.EventType":          payments.EventAccountBalanceLow,
		"payments.FieldError":         payments.FieldError{Field: "bvn", Message: "must be exactly 11 digits"},
		"payments.Identification":     *id,
		"payments.IdentificationType": payments.IdentificationNationalID,
		"payments.MalformedResponseError": payments.MalformedResponseError{Reason: "the envelope has no data",
			Response: resp},
		"payments.Operation": op,
		"payments.OperationResult": payments.OperationResult{StatusCode: 200, Stan: "000125", IdempotencyKey: "key-4",
			Attempts: 3, Waited: 1500 * time.Millisecond, Surprises: []payments.Surprise{surprise}},
		"payments.Payer": payments.Payer{Name: "Chidi Obi", AccountNumber: rtPayerAcct, BankName: "Access", BankCode: "044"},
		"payments.Payment": payments.Payment{ID: "p-1", Reference: "order-1042", Status: payments.PaymentStatusPending,
			Amount: rtAmount("15000.5"), Currency: "NGN", Description: "Invoice 1042", Type: "transfer", SubType: "domestic",
			Category: "payout", TransactionDate: rtTime, Tags: "invoice,march", IsReversed: true, IsCompleted: true,
			Channel: "api", Notes: "first", CreatedAt: rtTime, UpdatedAt: rtTime.Add(time.Hour), Quote: quote},
		"payments.PaymentConfirmParams": payments.PaymentConfirmParams{Reference: "order-1042", QuoteID: "q-1"},
		"payments.PaymentDetails":       *details,
		"payments.PaymentInitiateParams": payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: rtAmount("15000.5")},
			Currency: "NGN", RecipientID: recipientUUID, Description: "Invoice 1042", Reference: "order-1042",
			TransactionType: "transfer", TransactionCategory: "payout", TransactionTags: "a,b", TransactionNotes: "n",
			Channel: "api", SubType: "domestic"},
		"payments.PaymentStatus": payments.PaymentStatusRejected,
		"payments.Surprise":      surprise,
		"payments.SurpriseKind":  payments.SurprisePaymentStatus,
		"payments.PersonalData":  payments.PersonalData(rtBVN),
		"payments.Quote":         *quote,
		"payments.Recipient": payments.Recipient{ID: recipientUUID, MerchantID: merchantUUID, AccountNumber: rtAccount,
			AccountName: "Ada Okafor", AccountType: payments.AccountTypeIndividual, IsInternalAccount: true,
			AccountCurrency: "NGN", AccountBankName: "First Bank", AccountBankCode: "011", AccountCountryCode: "NG",
			AccountCountry: "Nigeria", Identification: id, Limit: &limit, PaymentDetails: details,
			CreatedAt: rtTime, UpdatedAt: rtTime.Add(time.Hour)},
		"payments.RecipientCreateParams": payments.RecipientCreateParams{AccountNumber: rtAccount, AccountName: "Ada Okafor",
			AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN", AccountCountryCode: "NG",
			AccountBankName: "First Bank", AccountBankCode: "011", AmountLimit: &payments.Amount{Decimal: limit},
			Identification: id, PaymentDetails: details},
		"payments.RecipientUpdateParams": payments.RecipientUpdateParams{AccountNumber: rtAccount, AccountName: "Ada N. Okafor",
			AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN", AccountCountryCode: "NG",
			AccountBankName: "First Bank", AccountBankCode: "011", AmountLimit: &payments.Amount{Decimal: limit},
			IdentificationType: payments.IdentificationNationalID, IdentificationNumber: rtIDNumber, PaymentDetails: details},
		"payments.Response":    *resp,
		"payments.RetryBudget": payments.RetryBudget{Tokens: 500, RetryCost: 5, TimeoutCost: 10, SuccessRefund: 1},
		"payments.RetryPolicy": payments.RetryPolicy{MaxAttempts: 4, WaitMin: time.Second, WaitMax: 5 * time.Second, AttemptTimeout: 30 * time.Second},
		"payments.TransportError": payments.TransportError{Method: http.MethodPost, Path: "/payments/confirm",
			IdempotencyKey: "key-5", Attempts: 4, BudgetExhausted: true},
		"payments.TriggerResult":   payments.TriggerResult{EventType: payments.EventPaymentCompleted, Data: json.RawMessage(`{"ok":true}`)},
		"payments.ValidationError": payments.ValidationError{Fields: []payments.FieldError{{Field: "email", Message: "is required"}}},
		"payments.VirtualAccount": payments.VirtualAccount{ID: "va-1", Currency: "NGN", AccountNumber: rtAccount2,
			AccountName: "Ada Okafor", BankName: "Sandbox Bank", IsActive: true, CreatedAt: rtTime},
		"payments.VirtualAccountCreateParams": payments.VirtualAccountCreateParams{AccountType: payments.AccountTypeIndividual,
			AccountName: "Ada Okafor", Email: rtEmail, FirstName: "Ada", LastName: "Okafor", DisplayName: "Ada O.",
			BVN: rtBVN, MobileNumber: rtMobile, Metadata: &payments.VirtualAccountMetadata{BusinessRegNumber: "RC-1",
				Country: "NG", UseCase: "collections", Reference: "cust-7"}},
		"payments.VirtualAccountMetadata": payments.VirtualAccountMetadata{BusinessRegNumber: "RC-1", Country: "NG",
			UseCase: "collections", Reference: "cust-7"},
		"payments.VirtualAccountPayment": payments.VirtualAccountPayment{ID: "tx-1", Reference: "SBX-IN-000001",
			Amount: rtAmount("5000.25"), Currency: "NGN", Status: "successful", Description: "from " + rtPayerAcct,
			VirtualAccountID: "va-1", AccountNumber: rtAccount2, AccountName: "Ada Okafor",
			Payer:      payments.Payer{Name: "Chidi Obi", AccountNumber: rtPayerAcct, BankName: "Access", BankCode: "044"},
			ReceivedAt: rtTime, CreatedAt: rtTime.Add(-time.Second)},

		"webhook.Checkpoint":      checkpoint,
		"webhook.Claim":           webhook.Claim{EventID: "evt-1", Status: webhook.ClaimInProgress, Token: "tok-1", LeaseExpires: rtTime},
		"webhook.ClaimStatus":     webhook.ClaimDone,
		"webhook.DeliveryOutcome": webhook.OutcomeProcessed,
		"webhook.DeliveryResult": webhook.DeliveryResult{EventID: "evt-1", EventType: payments.EventPaymentCompleted,
			Outcome: webhook.OutcomeFailed, StatusCode: 500, Surprises: []payments.Surprise{surprise}},
		"webhook.ReconcileResult": webhook.ReconcileResult{Processed: 3, Enqueued: 4, AlreadyDone: 2, InProgress: 1, Failed: 1,
			FailedIDs: []string{"evt-4"}, Checkpoint: checkpoint},

		"outcome.ConflictError": *conflict,
		"outcome.Effect":        outcome.EffectBackward,
		"outcome.Kind":          outcome.KindRecipient,
		"outcome.Outcome":       oc,
		"outcome.Result": outcome.Result{Kind: outcome.KindPayment, ID: "p-1", Reference: "order-1042",
			State: outcome.StateCompleted, IsCompleted: true, IsReversed: true, EventID: "evt-1",
			EventType: payments.EventPaymentCompleted, EventCreatedAt: rtTime, RecordedAt: rtTime.Add(time.Second), Outcome: oc},
		"outcome.State":   outcome.StateVerified,
		"outcome.Step":    step,
		"outcome.Subject": outcome.Subject{Kind: outcome.KindPayment, ID: "p-1", Reference: "order-1042"},
	}
}

// notData are the exported types that hold no data to store: behaviour
// (clients, services, handlers, stores, verifiers), functions and options.
var notData = map[string]string{
	"payments.APIResource":            "the response a resource came with: a function, left out of encodings by design",
	"payments.Client":                 "a connection pool and credentials",
	"payments.Middleware":             "a function",
	"payments.Option":                 "an option",
	"payments.OperationObserver":      "a function",
	"payments.PaymentsService":        "a service",
	"payments.RecipientsService":      "a service",
	"payments.RequestOption":          "an option",
	"payments.VirtualAccountsService": "a service",
	"payments.WebhooksService":        "a service",
	"webhook.DeliveryObserver":        "a function",
	"webhook.EnqueueFunc":             "a function",
	"webhook.EventFunc":               "a function",
	"webhook.EventIDVerifier":         "an interface",
	"webhook.Handler":                 "an http.Handler",
	"webhook.HandlerOption":           "an option",
	"webhook.MemoryClaimStore":        "a store",
	"webhook.SignatureVerifier":       "holds secrets, never encoded",
	"webhook.StandardVerifier":        "holds secrets, never encoded",
	"webhook.ClaimStore":              "an interface",
	"webhook.Verifier":                "an interface",
	"webhook.VerifierOption":          "an option",
	"outcome.MemoryStore":             "a store",
	"outcome.Option":                  "an option",
	"outcome.Store":                   "an interface",
	"outcome.Subscriber":              "an interface",
	"outcome.Tracker":                 "a tracker over a store",
	"outcome.UpdateFunc":              "a function",
}

// zeroAllowed are the exported fields a full value leaves zero, and why.
var zeroAllowed = map[string]string{
	"APIError.Err":               "an error chain (a cause such as context.DeadlineExceeded) is not data: encoding/json cannot decode an interface",
	"MalformedResponseError.Err": "an error chain, as APIError.Err",
	"OperationResult.Err":        "an error chain, as APIError.Err",
	"TransportError.Err":         "an error chain, as APIError.Err",
	"DeliveryResult.Err":         "an error chain, as APIError.Err",
}

// exportedTypes lists the exported types declared in the non-test files of
// the public packages, as "pkg.Name".
func exportedTypes(t *testing.T) []string {
	t.Helper()
	var names []string
	for dir, pkg := range map[string]string{".": "payments", "webhook": "webhook", "outcome": "outcome"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.SkipObjectResolution)
		require.NoError(t, err)
		p, ok := pkgs[pkg]
		require.True(t, ok, "package %s in %s", pkg, dir)
		for _, f := range p.Files {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, s := range gd.Specs {
					if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
						names = append(names, pkg+"."+ts.Name.Name)
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// TestEveryTypeRoundTrips: every exported type of payments, webhook and
// outcome that holds data comes back from encoding/json, and from
// encoding/gob (every one of them: the response metadata a resource embeds,
// APIResource, is a function, which both leave out), equal to what went in,
// personal data included: a merchant can store, cache or queue any of them. A new exported type fails this
// test until it has a case here (or a reason in notData).
func TestEveryTypeRoundTrips(t *testing.T) {
	cases := roundTripCases()
	declared := exportedTypes(t)
	for _, name := range declared {
		_, isCase := cases[name]
		_, skip := notData[name]
		assert.True(t, isCase != skip, "%s: give it a round-trip case or a reason in notData (not both)", name)
	}
	for name := range cases {
		assert.Contains(t, declared, name, "a case for a type that is not declared")
	}
	for name := range notData {
		assert.Contains(t, declared, name, "a reason for a type that is not declared")
	}

	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			assertFull(t, reflect.ValueOf(v))
			typ := reflect.TypeOf(v)

			b, err := json.Marshal(v)
			require.NoError(t, err)
			back := reflect.New(typ)
			require.NoError(t, json.Unmarshal(b, back.Interface()), "%s", b)
			assert.Equal(t, v, back.Elem().Interface(), "encoding/json: %s", b)
			for _, pd := range []string{rtAccount, rtAccount2, rtIDNumber, rtImage, rtBVN, rtEmail, rtMobile, rtPayerAcct} {
				if strings.Contains(goString(v), pd) {
					assert.Contains(t, string(b), pd, "encoding/json keeps personal data whole")
				}
			}
			assert.NotContains(t, string(b), "[redacted]")
			assert.NotContains(t, string(b), "****")

			var buf bytes.Buffer
			require.NoError(t, gob.NewEncoder(&buf).Encode(v))
			gback := reflect.New(typ)
			require.NoError(t, gob.NewDecoder(&buf).Decode(gback.Interface()))
			assert.Equal(t, v, gback.Elem().Interface(), "encoding/gob")
		})
	}
}

// goString is v's text fields in clear (and its raw JSON), for the test to
// know which personal data v's JSON must show (fmt would mask it).
func goString(v any) string {
	var b strings.Builder
	var walk func(reflect.Value)
	walk = func(rv reflect.Value) {
		switch rv.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !rv.IsNil() {
				walk(rv.Elem())
			}
		case reflect.Struct:
			for i := range rv.NumField() {
				if rv.Type().Field(i).IsExported() {
					walk(rv.Field(i))
				}
			}
		case reflect.Slice:
			if rv.Type().Elem().Kind() == reflect.Uint8 {
				if rv.Type() == reflect.TypeOf(json.RawMessage(nil)) {
					b.Write(rv.Bytes()) // JSON in JSON; other bytes are Base64 there
				}
				return
			}
			for i := range rv.Len() {
				walk(rv.Index(i))
			}
		case reflect.String:
			b.WriteString(rv.String() + "\x00")
		}
	}
	walk(reflect.ValueOf(v))
	return b.String()
}

// assertFull fails when an exported field of the struct v (not an embedded
// one) is zero, unless zeroAllowed says why: a case must exercise every
// field, so that a field that does not survive an encoding shows.
func assertFull(t *testing.T, v reflect.Value) {
	t.Helper()
	if v.Kind() != reflect.Struct {
		assert.False(t, v.IsZero(), "%s: a zero value proves nothing", v.Type())
		return
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() || f.Anonymous && f.Type.Kind() != reflect.Struct {
			continue
		}
		key := v.Type().Name() + "." + f.Name
		if _, ok := zeroAllowed[key]; ok {
			continue
		}
		assert.False(t, v.Field(i).IsZero(), "%s is zero in its case: set it", key)
	}
}

// TestAmountEncodesAsAJSONNumber: an Amount is a JSON number with its
// digits, decodes from a number or a string, and keeps its value (15000.50
// is written 15000.5).
func TestAmountEncodesAsAJSONNumber(t *testing.T) {
	b, err := json.Marshal(payments.Amount{Decimal: decimal.RequireFromString("1234567890.123456789")})
	require.NoError(t, err)
	assert.Equal(t, `1234567890.123456789`, string(b))
	b, err = json.Marshal(payments.Amount{Decimal: decimal.RequireFromString("15000.50")})
	require.NoError(t, err)
	assert.Equal(t, `15000.5`, string(b))
	for _, in := range []string{`15000.50`, `"15000.50"`} {
		var a payments.Amount
		require.NoError(t, json.Unmarshal([]byte(in), &a))
		assert.True(t, a.Equal(decimal.RequireFromString("15000.5")), "%s decoded as %s", in, a)
	}
}

// TestPersonalDataIsMaskedInText: every value of TestEveryTypeRoundTrips,
// by value and by pointer, printed with %v, %+v, %#v, %s, %q and %x, turned
// into text by String where it has one, and logged by slog's text and JSON
// handlers, shows no account number whole, no BVN, identification number or
// image, email or mobile number: only the JSON and gob encodings keep them.
// An account number keeps its last four digits in text.
func TestPersonalDataIsMaskedInText(t *testing.T) {
	personal := []string{rtAccount, rtAccount2, rtIDNumber, rtImage, rtBVN, rtEmail, rtMobile, rtPayerAcct}
	for name, v := range roundTripCases() {
		ptr := reflect.New(reflect.TypeOf(v))
		ptr.Elem().Set(reflect.ValueOf(v))
		for how, x := range map[string]any{"value": v, "pointer": ptr.Interface()} {
			forms := printedForms(t, x)
			for _, verb := range []string{"%q", "%x", "%X"} {
				forms[verb] = fmt.Sprintf(verb, x)
			}
			if s, ok := x.(fmt.Stringer); ok {
				forms["String"] = s.String()
			}
			if e, ok := x.(error); ok {
				forms["Error"] = e.Error()
			}
			for form, s := range forms {
				for _, pd := range personal {
					assert.NotContains(t, s, pd, "%s by %s, %s", name, how, form)
					assert.NotContains(t, strings.ToLower(s), hex.EncodeToString([]byte(pd)), "%s by %s, %s (hex)", name, how, form)
				}
			}
		}
	}
	cases := roundTripCases()
	assert.Equal(t, "****6789", fmt.Sprintf("%v", cases["payments.AccountNumber"]))
	assert.Equal(t, "[redacted]", fmt.Sprintf("%s", cases["payments.PersonalData"]))
	assert.Contains(t, printedForms(t, cases["payments.Recipient"])["slog json"], `"account_number":"****6789"`)
	assert.Contains(t, printedForms(t, cases["payments.VirtualAccountCreateParams"])["slog text"], `v.bvn=[redacted]`)
	assert.Contains(t, fmt.Sprintf("%+v", cases["payments.Response"]), "Replayed:true Body:[55 bytes]")
	apiErr := cases["payments.APIError"].(payments.APIError)
	assert.Equal(t, apiErr.Error(), fmt.Sprintf("%#v", &apiErr), "an APIError prints its text, never its Body")
}
