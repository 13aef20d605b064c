package payments

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPaymentDecoderIsDecodingIntoThePayment: a payment decodes into a copy
// of its fields that finish stores back (quote.go), with the result of
// encoding/json decoding into the payment itself: members the data has
// replace fields, fields it has no member for keep their value, the amount
// and quote aside (finish sets them). Both ways in: the call's scratch and
// decodeData, whose values are pooled: a payment decoded earlier is left
// intact by the later decodes.
func TestPaymentDecoderIsDecodingIntoThePayment(t *testing.T) {
	data := dataOf(scanBody)
	type decoded struct {
		got  *Payment
		want Payment
	}
	var earlier []decoded
	for _, body := range [][]byte{data, []byte(`{"id":"p-2","amount":"1","notes":"new"}`), []byte(`{"amount":"1","status":null}`)} {
		start := Payment{ID: "old", Reference: "ref-old", Status: "pending", Notes: "kept", Channel: "web",
			CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Quote: &Quote{QuoteID: "old"}}
		want := start
		require.NoError(t, json.Unmarshal(body, (*plainPayment)(&want)))

		viaData := new(Payment)
		*viaData = start
		require.NoError(t, viaData.decodeData(body))
		viaScratch := start
		var s decodeScratch
		fin := viaScratch.decoder(&s)
		require.NoError(t, json.Unmarshal(body, fin))
		fin.finish(false)

		earlier = append(earlier, decoded{viaData, want})
		for _, got := range []Payment{*viaData, viaScratch} {
			assert.True(t, got.Amount.Equal(decimal.RequireFromString(gjsonAmount(t, body))), "amount %s", got.Amount)
			got.Amount, got.Quote = want.Amount, want.Quote
			assert.Equal(t, want, got, "%s", body)
		}
	}
	for _, d := range earlier {
		got := *d.got
		got.Amount, got.Quote = d.want.Amount, d.want.Quote
		assert.Equal(t, d.want, got)
	}
}

// gjsonAmount is the amount member of a payment's JSON.
func gjsonAmount(t *testing.T, body []byte) string {
	var v struct{ Amount json.Number }
	require.NoError(t, json.Unmarshal(body, &v))
	return v.Amount.String()
}
