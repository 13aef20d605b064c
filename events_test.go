package payments_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// Identifiers of the webhook tests carry a "wh" prefix: other test files of
// this package are written concurrently by other people.
const (
	whEventID   = "6a1f3c2e-9b4d-4e8a-b7c6-5d4e3f2a1b0c"
	whPaymentID = "1b2c3d4e-5f60-4718-a9b0-c1d2e3f4a5b6"
)

// whEventJSON builds an event body around data (raw JSON, or "" for none).
func whEventJSON(id string, typ payments.EventType, data string) []byte {
	if data == "" {
		return []byte(fmt.Sprintf(`{"id":%q,"event":%q,"created_at":"2024-05-01T10:00:00Z"}`, id, typ))
	}
	return []byte(fmt.Sprintf(`{"id":%q,"event":%q,"created_at":"2024-05-01T10:00:00Z","data":%s}`, id, typ, data))
}

func whDec(t *testing.T, s string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(s)
	require.NoError(t, err)
	return d
}

func TestParseEventEnvelope(t *testing.T) {
	ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventPaymentCompleted, `{"id":"p1"}`))
	require.NoError(t, err)
	assert.Equal(t, whEventID, ev.ID)
	assert.Equal(t, payments.EventPaymentCompleted, ev.Type)
	assert.True(t, ev.CreatedAt.Equal(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)), "created_at = %s", ev.CreatedAt)
	assert.JSONEq(t, `{"id":"p1"}`, string(ev.Data))
	assert.Equal(t, string(whEventJSON(whEventID, payments.EventPaymentCompleted, `{"id":"p1"}`)), string(ev.RawJSON()))
}

func TestParseEventUnknownTypeParses(t *testing.T) {
	ev, err := payments.ParseEvent(whEventJSON(whEventID, "payout.settled", `{"amount":"10.00","foo":[1,2]}`))
	require.NoError(t, err)
	assert.Equal(t, payments.EventType("payout.settled"), ev.Type)

	var generic map[string]any
	require.NoError(t, ev.DecodeData(&generic))
	assert.Equal(t, "10.00", generic["amount"])

	_, err = ev.Payment()
	assert.ErrorIs(t, err, payments.ErrWrongEventType)
}

func TestParseEventTypeAliasAndTimestamps(t *testing.T) {
	want := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		createdAt string
		want      time.Time
	}{
		"rfc3339 with offset":   {`"2024-05-01T11:00:00+01:00"`, want},
		"fractional seconds":    {`"2024-05-01T10:00:00.000Z"`, want},
		"no zone is UTC":        {`"2024-05-01T10:00:00"`, want},
		"space separator":       {`"2024-05-01 10:00:00"`, want},
		"unix seconds":          {fmt.Sprint(want.Unix()), want},
		"unreadable means zero": {`"yesterday"`, time.Time{}},
		"object means zero":     {`{"at":1}`, time.Time{}},
		"null means zero":       {`null`, time.Time{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			body := `{"id":"e1","type":"recipient.created","created_at":` + tc.createdAt + `,"data":{}}`
			ev, err := payments.ParseEvent([]byte(body))
			require.NoError(t, err)
			assert.Equal(t, payments.EventRecipientCreated, ev.Type, `"type" is read when "event" is absent`)
			assert.True(t, ev.CreatedAt.Equal(tc.want), "got %s, want %s", ev.CreatedAt, tc.want)
		})
	}
}

func TestParseEventRejectsNonEvents(t *testing.T) {
	cases := map[string]string{
		"empty":           ``,
		"spaces":          "  \n",
		"null":            `null`,
		"array":           `[{"id":"e1","event":"payment.completed"}]`,
		"string":          `"payment.completed"`,
		"truncated":       `{"id":"e1","event":"payment.completed"`,
		"html":            `<html>502 Bad Gateway</html>`,
		"no id":           `{"event":"payment.completed","data":{}}`,
		"empty id":        `{"id":"","event":"payment.completed","data":{}}`,
		"id is an object": `{"id":{"v":"e1"},"event":"payment.completed","data":{}}`,
		"no event":        `{"id":"e1","data":{}}`,
		"blank event":     `{"id":"e1","event":"  ","data":{}}`,
		"trailing data":   `{"id":"e1","event":"payment.completed"} {}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			ev, err := payments.ParseEvent([]byte(body))
			require.Error(t, err)
			assert.Nil(t, ev)
			assert.ErrorIs(t, err, payments.ErrInvalidEvent)
		})
	}
}

func TestEventPaymentAccessorDecodesAmountsAndQuote(t *testing.T) {
	cases := map[string]string{
		"amounts as strings": `{"id":"` + whPaymentID + `","reference":"order-42","status":"completed",
			"amount":"1500.50","currency":"NGN","created_at":"2024-05-01T09:59:00Z",
			"quote":{"quote_id":"q-1","amount":"1500.50","fee":"10.25","exchange_rate":"1","total_amount":"1510.75",
			"currency":"NGN","expires_at":"2024-05-01T10:04:00Z"}}`,
		"amounts as numbers": `{"id":"` + whPaymentID + `","reference":"order-42","status":"completed",
			"amount":1500.50,"currency":"NGN","created_at":"2024-05-01T09:59:00Z",
			"quote":{"quote_id":"q-1","amount":1500.50,"fee":10.25,"exchange_rate":1,"total_amount":1510.75,
			"currency":"NGN","expires_at":"2024-05-01T10:04:00Z"}}`,
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventPaymentCompleted, data))
			require.NoError(t, err)
			p, err := ev.Payment()
			require.NoError(t, err)
			assert.Equal(t, whPaymentID, p.ID)
			assert.Equal(t, "order-42", p.Reference)
			assert.Equal(t, payments.PaymentStatusCompleted, p.Status)
			assert.True(t, p.Amount.Equal(whDec(t, "1500.5")), "amount = %s", p.Amount)
			require.NotNil(t, p.Quote)
			assert.Equal(t, "q-1", p.Quote.QuoteID)
			assert.True(t, p.Quote.Fee.Equal(whDec(t, "10.25")), "fee = %s", p.Quote.Fee)
			assert.True(t, p.Quote.TotalAmount.Equal(whDec(t, "1510.75")), "total = %s", p.Quote.TotalAmount)
			assert.True(t, p.Quote.ExchangeRate.Equal(decimal.NewFromInt(1)))
			assert.True(t, p.Quote.ExpiresAt.Equal(time.Date(2024, 5, 1, 10, 4, 0, 0, time.UTC)))
			assert.JSONEq(t, data, string(p.RawJSON()), "RawJSON is the event's data")
			assert.Nil(t, p.LastResponse(), "a resource from a webhook came from no API call")
		})
	}
}

func TestEventPaymentAccessorKeepsExactDigits(t *testing.T) {
	// A float64 would turn this into 0.30000000000000004 or lose the tail.
	data := `{"id":"p","amount":12345678901234567.89,"currency":"NGN"}`
	ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventPaymentFailed, data))
	require.NoError(t, err)
	p, err := ev.Payment()
	require.NoError(t, err)
	assert.Equal(t, "12345678901234567.89", p.Amount.String())
	assert.Nil(t, p.Quote, "no quote in the data")
}

func TestEventRecipientAccessor(t *testing.T) {
	data := `{"id":"r-1","account_number":"0123456789","account_name":"Ada Okafor","account_type":"business",
		"account_currency":"NGN","limit":"250000.00","identification":{"identification_type":"passport"},
		"created_at":"2024-05-01T09:00:00Z","updated_at":"2024-05-01T09:30:00Z","brand_new_field":true}`
	ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventRecipientVerified, data))
	require.NoError(t, err)
	r, err := ev.Recipient()
	require.NoError(t, err)
	assert.Equal(t, "r-1", r.ID)
	assert.Equal(t, payments.AccountTypeBusiness, r.AccountType)
	require.NotNil(t, r.Limit)
	assert.True(t, r.Limit.Equal(whDec(t, "250000")), "limit = %s", r.Limit)
	require.NotNil(t, r.Identification)
	assert.Equal(t, payments.IdentificationPassport, r.Identification.Type)
	assert.Contains(t, string(r.RawJSON()), "brand_new_field", "unknown fields stay reachable")
}

func TestEventVirtualAccountAccessor(t *testing.T) {
	data := `{"id":"va-1","currency":"NGN","account_number":"9912345678","account_name":"Acme Collections",
		"bank_name":"Example Bank","is_active":true,"created_at":"2024-05-01T09:00:00Z"}`
	for _, typ := range []payments.EventType{payments.EventVirtualAccountCreated, payments.EventVirtualAccountUpdated} {
		ev, err := payments.ParseEvent(whEventJSON(whEventID, typ, data))
		require.NoError(t, err)
		va, err := ev.VirtualAccount()
		require.NoError(t, err, typ)
		assert.Equal(t, "va-1", va.ID)
		assert.Equal(t, "9912345678", string(va.AccountNumber))
		assert.True(t, va.IsActive)
		assert.JSONEq(t, data, string(va.RawJSON()))
	}
}

func TestEventVirtualAccountPaymentAccessor(t *testing.T) {
	cases := map[string]string{
		"nested payer, string amount": `{"id":"tx-1","reference":"ref-9","amount":"25000.75","currency":"NGN",
			"virtual_account":{"id":"va-1","account_number":"9912345678","account_name":"Acme Collections"},
			"payer":{"name":"John Doe","account_number":"0987654321","bank_name":"Other Bank","bank_code":"044"},
			"narration":"invoice 17","paid_at":"2024-05-01T10:00:00Z","created_at":"2024-05-01T10:00:01Z"}`,
		"flat sender fields, number amount": `{"transaction_id":"tx-1","session_id":"ref-9","amount":25000.75,"currency":"NGN",
			"virtual_account_id":"va-1","virtual_account_number":9912345678,"account_name":"Acme Collections",
			"sender_name":"John Doe","sender_account_number":"0987654321","sender_bank_name":"Other Bank","sender_bank_code":"044",
			"description":"invoice 17","received_at":1714557600,"created_at":"2024-05-01T10:00:01Z"}`,
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventVirtualAccountPaymentReceived, data))
			require.NoError(t, err)
			vp, err := ev.VirtualAccountPayment()
			require.NoError(t, err)
			assert.Equal(t, "tx-1", vp.ID)
			assert.Equal(t, "ref-9", vp.Reference)
			assert.True(t, vp.Amount.Equal(whDec(t, "25000.75")), "amount = %s", vp.Amount)
			assert.Equal(t, "NGN", vp.Currency)
			assert.Equal(t, "va-1", vp.VirtualAccountID)
			assert.Equal(t, "9912345678", string(vp.AccountNumber))
			assert.Equal(t, "Acme Collections", vp.AccountName)
			assert.Equal(t, payments.Payer{Name: "John Doe", AccountNumber: "0987654321", BankName: "Other Bank", BankCode: "044"}, vp.Payer)
			assert.Equal(t, "invoice 17", vp.Description)
			assert.True(t, vp.ReceivedAt.Equal(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)), "received at %s", vp.ReceivedAt)
			assert.True(t, vp.CreatedAt.Equal(time.Date(2024, 5, 1, 10, 0, 1, 0, time.UTC)))
			assert.JSONEq(t, data, string(vp.RawJSON()))

			printed := fmt.Sprint(*vp) + fmt.Sprintf("%v %+v %#v", vp.Payer, vp.Payer, vp.Payer)
			assert.NotContains(t, printed, "9912345678")
			assert.NotContains(t, printed, "0987654321")
			assert.Contains(t, printed, "****5678")
		})
	}
}

func TestEventVirtualAccountPaymentNeedsAnAmount(t *testing.T) {
	for name, data := range map[string]string{
		"missing": `{"id":"tx-1","currency":"NGN"}`,
		"null":    `{"id":"tx-1","amount":null}`,
		"garbage": `{"id":"tx-1","amount":"twelve"}`,
	} {
		ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventVirtualAccountPaymentReceived, data))
		require.NoError(t, err)
		_, err = ev.VirtualAccountPayment()
		assert.ErrorIs(t, err, payments.ErrInvalidEventData, name)
	}
}

func TestEventAccessorOnWrongKind(t *testing.T) {
	recipientEvent, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventRecipientCreated, `{"id":"r-1"}`))
	require.NoError(t, err)
	_, err = recipientEvent.Payment()
	require.ErrorIs(t, err, payments.ErrWrongEventType)
	assert.Contains(t, err.Error(), `"recipient.created"`, "the error names the event's kind")
	assert.Contains(t, err.Error(), "payment")
	_, err = recipientEvent.VirtualAccount()
	assert.ErrorIs(t, err, payments.ErrWrongEventType)
	_, err = recipientEvent.VirtualAccountPayment()
	assert.ErrorIs(t, err, payments.ErrWrongEventType)

	received, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventVirtualAccountPaymentReceived, `{"amount":"1"}`))
	require.NoError(t, err)
	_, err = received.VirtualAccount()
	assert.ErrorIs(t, err, payments.ErrWrongEventType, "a received payment is not the account itself")
	_, err = received.Recipient()
	assert.ErrorIs(t, err, payments.ErrWrongEventType)

	balance, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventAccountBalanceLow, `{"balance":"12.00"}`))
	require.NoError(t, err)
	_, err = balance.Payment()
	assert.ErrorIs(t, err, payments.ErrWrongEventType)
	var b struct {
		Balance decimal.Decimal `json:"balance"`
	}
	require.NoError(t, balance.DecodeData(&b))
	assert.True(t, b.Balance.Equal(whDec(t, "12")))
}

func TestEventAccessorDataProblems(t *testing.T) {
	noData, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventPaymentCompleted, ""))
	require.NoError(t, err)
	assert.Nil(t, noData.Data)
	_, err = noData.Payment()
	assert.ErrorIs(t, err, payments.ErrInvalidEventData)
	assert.ErrorIs(t, noData.DecodeData(&struct{}{}), payments.ErrInvalidEventData)

	nullData, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventPaymentCompleted, "null"))
	require.NoError(t, err)
	_, err = nullData.Payment()
	assert.ErrorIs(t, err, payments.ErrInvalidEventData)

	// A decoding error may quote the bad value: long digit runs are masked
	// in the message, and the cause stays reachable with errors.As.
	bad, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventPaymentCompleted, `{"amount":"acct 01234567890"}`))
	require.NoError(t, err)
	_, err = bad.Payment()
	require.ErrorIs(t, err, payments.ErrInvalidEventData)
	assert.NotContains(t, err.Error(), "01234567890")
	assert.Contains(t, err.Error(), whEventID)

	wrongShape, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventRecipientCreated, `{"is_internal_account":"yes"}`))
	require.NoError(t, err)
	_, err = wrongShape.Recipient()
	require.ErrorIs(t, err, payments.ErrInvalidEventData)
	var typeErr *json.UnmarshalTypeError
	assert.True(t, errors.As(err, &typeErr), "the decoding error is reachable: %v", err)
}

func TestEventLogOmitsData(t *testing.T) {
	ev, err := payments.ParseEvent(whEventJSON(whEventID, payments.EventRecipientCreated, `{"account_number":"0123456789"}`))
	require.NoError(t, err)
	for name, v := range map[string]any{"*Event": ev, "Event": *ev} {
		for how, s := range printedForms(t, v) {
			assert.Contains(t, s, whEventID, "%s %s", name, how)
			assert.Contains(t, s, "recipient.created", "%s %s", name, how)
			assert.False(t, strings.Contains(s, "0123456789"), "%s %s: data is never logged: %s", name, how, s)
			assert.NotContains(t, s, "[123 ", "%s %s: nor the body", name, how)
		}
	}
	forms := printedForms(t, ev)
	assert.Contains(t, forms["slog text"], `v.id=`+whEventID+` v.event=recipient.created v.created_at=2024-05-01T10:00:00.000Z`)
	assert.Contains(t, forms["slog json"], `"v":{"id":"`+whEventID+`","event":"recipient.created","created_at":"2024-05-01T10:00:00Z"}`)
}
