package payments_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// echoRecipient answers a recipients create (201) or update (200) as a
// service would: recipientJSON with the limit sent (amount_limit, as a
// string with its exact digits), or without a limit when none was sent.
func echoRecipient(status int) func(req *http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		var sent struct {
			Limit json.Number `json:"amount_limit"`
		}
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &sent); err != nil {
			return nil, err
		}
		limit := `"limit": "` + sent.Limit.String() + `",`
		if sent.Limit == "" {
			limit = ""
		}
		return jsonResponder(status, okEnvelope(strings.Replace(recipientJSON, `"limit": "250000.00",`, limit, 1)))(req)
	}
}

// recipientLimitAnswer is recipientJSON with its limit as the JSON value v.
func recipientLimitAnswer(v string) string {
	return okEnvelope(strings.Replace(recipientJSON, `"limit": "250000.00"`, `"limit": `+v, 1))
}

// TestRecipientAmountsDisagree: a recipient whose limit comes back 100
// times, or a hundredth of, the AmountLimit sent, from Create or Update, or
// whose echo of an amount sent with WithBodyField differs, is a
// *MalformedResponseError that names both amounts (whole, never masked),
// says what to do and keeps the answer; no Recipient is returned.
func TestRecipientAmountsDisagree(t *testing.T) {
	type call func(c *payments.Client) (*payments.Recipient, error)
	create := func(limit string, opts ...payments.RequestOption) call {
		return func(c *payments.Client) (*payments.Recipient, error) {
			p := validRecipientParams()
			p.AmountLimit = amountPtr(limit)
			return c.Recipients.Create(context.Background(), p, opts...)
		}
	}
	update := func(limit string) call {
		return func(c *payments.Client) (*payments.Recipient, error) {
			return c.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{AmountLimit: amountPtr(limit)})
		}
	}
	for name, tc := range map[string]struct {
		method, path string
		status       int
		answer       string
		call         call
		reasons      []string
	}{
		"create, 100 times (minor units)": {http.MethodPost, "/payments/recipients", 201, recipientLimitAnswer(`"25000000.00"`), create("250000"), []string{
			"the recipient's limit (data.limit) is 25000000 where 250000 was sent (amount_limit) (100 times the amount sent: the service may count in minor units)"}},
		"create, 100 times as a number": {http.MethodPost, "/payments/recipients", 201, recipientLimitAnswer(`25000000`), create("250000.00"), []string{
			"is 25000000 where 250000 was sent", "100 times"}},
		"create, a hundredth": {http.MethodPost, "/payments/recipients", 201, recipientLimitAnswer(`"2500.00"`), create("250000"), []string{
			"the recipient's limit (data.limit) is 2500 where 250000 was sent (amount_limit) (a hundredth of the amount sent"}},
		"update, 100 times": {http.MethodPut, "/payments/recipients/" + recipientUUID, 200, recipientLimitAnswer(`"50000000.00"`), update("500000"), []string{
			"is 50000000 where 500000 was sent (amount_limit) (100 times"}},
		"update, a hundredth": {http.MethodPut, "/payments/recipients/" + recipientUUID, 200, recipientLimitAnswer(`"5000"`), update("500000"), []string{
			"is 5000 where 500000 was sent", "(a hundredth"}},
		"an amount sent with WithBodyField": {http.MethodPost, "/payments/recipients", 201,
			okEnvelope(strings.Replace(recipientJSON, `"limit"`, `"daily_amount_cap": "1000000", "limit"`, 1)),
			create("250000.00", payments.WithBodyField("daily_amount_cap", 10000)), []string{
				"data.daily_amount_cap is 1000000 where 10000 was sent (WithBodyField(daily_amount_cap)) (100 times"}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.on(tc.method, tc.path, jsonResponder(tc.status, tc.answer))
			r, err := tc.call(h.client)
			assert.Nil(t, r, "no recipient with a wrong amount")
			var merr *payments.MalformedResponseError
			require.ErrorAs(t, err, &merr)
			require.ErrorIs(t, err, payments.ErrMalformedResponse)
			for _, want := range append(tc.reasons, "the answer disagrees with the amounts sent",
				"do not pay it until its limit is right", "ask the provider how it counts amounts", "the answer is in the error's Response.Body") {
				assert.Contains(t, merr.Reason, want)
				assert.Contains(t, err.Error(), want)
			}
			assert.Equal(t, tc.answer, string(merr.Response.Body), "the answer is kept whole")
			assert.Len(t, h.requests(), 1, "an answer that disagrees is not retried")
		})
	}
}

// TestRecipientAmountsAgree: an answer whose limit is the one sent, in
// other digits (250000 and "250000.00") or as a number, passes unchanged:
// the limit as the service wrote it, its scale kept. An answer without a
// limit, or a limit when none was sent, is not checked.
func TestRecipientAmountsAgree(t *testing.T) {
	for name, tc := range map[string]struct {
		sent      *payments.Amount
		answer    string
		want      string
		wantScale int32
	}{
		"same digits":            {amountPtr("250000.00"), recipientLimitAnswer(`"250000.00"`), "250000", -2},
		"fewer digits sent":      {amountPtr("250000"), recipientLimitAnswer(`"250000.00"`), "250000", -2},
		"more digits sent":       {amountPtr("250000.000"), recipientLimitAnswer(`"250000.0"`), "250000", -1},
		"a number":               {amountPtr("250000.5"), recipientLimitAnswer(`250000.50`), "250000.5", -2},
		"none sent":              {nil, recipientLimitAnswer(`"25000000.00"`), "25000000", -2},
		"none answered":          {amountPtr("250000"), okEnvelope(strings.Replace(recipientJSON, `"limit": "250000.00",`, ``, 1)), "", 0},
		"null answered":          {amountPtr("250000"), recipientLimitAnswer(`null`), "", 0},
		"a tiny amount":          {amountPtr("0.000000000000000001"), recipientLimitAnswer(`"0.0000000000000000010"`), "0.000000000000000001", -19},
		"the largest amount":     {amountPtr("999999999999999999.999999999999999999"), recipientLimitAnswer(`"999999999999999999.999999999999999999"`), "999999999999999999.999999999999999999", -18},
		"the limit echoed as is": {amountPtr("1234567890.123456789"), recipientLimitAnswer(`1234567890.123456789`), "1234567890.123456789", -9},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodPost, "/payments/recipients", jsonResponder(201, tc.answer))
			h.on(http.MethodPut, "/payments/recipients/"+recipientUUID, jsonResponder(200, tc.answer))
			p := validRecipientParams()
			p.AmountLimit = tc.sent
			created, err := h.client.Recipients.Create(context.Background(), p)
			require.NoError(t, err)
			updated, err := h.client.Recipients.Update(context.Background(), recipientUUID, &payments.RecipientUpdateParams{AccountName: "Ada N. Okafor", AmountLimit: tc.sent})
			require.NoError(t, err)
			for _, r := range []*payments.Recipient{created, updated} {
				if tc.want == "" {
					assert.Nil(t, r.Limit)
					continue
				}
				require.NotNil(t, r.Limit)
				assert.True(t, r.Limit.Equal(mustDecimal(tc.want)), "%s, want %s", r.Limit, tc.want)
				assert.Equal(t, tc.wantScale, r.Limit.Exponent(), "the scale the service wrote is kept")
			}
		})
	}
}

// TestVirtualAccountAmountsDisagree: an amount sent to VirtualAccounts.Create
// with WithBodyField (a number, or a numeric string) that the answer echoes
// 100 times or a hundredth of is a *MalformedResponseError naming both,
// with the answer kept; the same amount echoed in other digits, a member
// the answer does not echo, and a field that is not an amount pass.
func TestVirtualAccountAmountsDisagree(t *testing.T) {
	withMembers := func(members string) string {
		return okEnvelope(strings.Replace(virtualAccountJSON, `"is_active": true,`, `"is_active": true, `+members, 1))
	}
	for name, tc := range map[string]struct {
		answer  string
		opts    []payments.RequestOption
		reasons []string // none: the call succeeds
	}{
		"100 times": {withMembers(`"expected_amount": "500000",`), []payments.RequestOption{payments.WithBodyField("expected_amount", 5000)}, []string{
			"data.expected_amount is 500000 where 5000 was sent (WithBodyField(expected_amount)) (100 times the amount sent: the service may count in minor units)"}},
		"a hundredth, sent as a string": {withMembers(`"Amount_Limit": 50,`), []payments.RequestOption{payments.WithBodyField("amount_limit", "5000.00")}, []string{
			"data.amount_limit is 50 where 5000 was sent", "(a hundredth of the amount sent"}},
		"two fields": {withMembers(`"min_amount": 10000, "max_amount": "2000000",`), []payments.RequestOption{
			payments.WithBodyField("min_amount", json.RawMessage(`100`)), payments.WithBodyField("max_amount", "20000")}, []string{
			"data.min_amount is 10000 where 100 was sent", "; data.max_amount is 2000000 where 20000 was sent"}},
		"agrees in other digits": {withMembers(`"expected_amount": "5000.00",`), []payments.RequestOption{payments.WithBodyField("expected_amount", 5000)}, nil},
		"not echoed":             {withMembers(``), []payments.RequestOption{payments.WithBodyField("expected_amount", 5000)}, nil},
		"echoed as text":         {withMembers(`"expected_amount": "five thousand",`), []payments.RequestOption{payments.WithBodyField("expected_amount", 5000)}, nil},
		"not an amount":          {withMembers(`"tier": 200,`), []payments.RequestOption{payments.WithBodyField("tier", 2)}, nil},
		"no field":               {withMembers(`"expected_amount": "500000",`), nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.on(http.MethodPost, "/accounts/virtual-accounts", jsonResponder(200, tc.answer))
			va, err := h.client.VirtualAccounts.Create(context.Background(), validVirtualAccountParams(), tc.opts...)
			if tc.reasons == nil {
				require.NoError(t, err)
				assert.Equal(t, vaUUID, va.ID)
				return
			}
			assert.Nil(t, va)
			var merr *payments.MalformedResponseError
			require.ErrorAs(t, err, &merr)
			for _, want := range append(tc.reasons, "the answer disagrees with the amounts sent",
				"do not share it until you have asked the provider how it counts amounts", "the answer is in the error's Response.Body") {
				assert.Contains(t, merr.Reason, want)
			}
			assert.Equal(t, tc.answer, string(merr.Response.Body), "the answer is kept whole")
		})
	}
}
