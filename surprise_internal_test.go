package payments

import (
	"encoding/json"
	"slices"
	"testing"
)

// scanBody is an initiate answer as the service sends it (bench_test.go's
// benchInitiateBody): what BenchmarkDataSurprises scans.
var scanBody = []byte(`{"success":true,"message":"Payment initiated","stan":"7c9e6679-7425-40de-944b-e07fc1f90ae7","data":{` +
	`"id":"9d7f4a2b-1c3e-4f5a-8b6c-7d8e9f0a1b2c","reference":"order-1042","status":"pending",` +
	`"amount":"15000.50","currency":"NGN","description":"Invoice 1042","type":"transfer",` +
	`"sub_type":"domestic","category":"payout","transaction_date":"2025-03-01T10:00:00Z",` +
	`"tags":"invoice,march","is_reversed":false,"is_completed":false,"channel":"api","notes":"",` +
	`"created_at":"2025-03-01T10:00:00Z","updated_at":"2025-03-01T10:00:00Z",` +
	`"quote":{"quote_id":"5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9","amount":"15000.50","fee":"25.00","exchange_rate":"1",` +
	`"total_amount":"15025.50","currency":"NGN","expires_at":"2025-03-01T10:05:00Z"}}}`)

// BenchmarkDataSurprises is the scan of a successful answer for what the
// SDK does not assume (dataSurprises), alone: every successful call pays it.
func BenchmarkDataSurprises(b *testing.B) {
	var p Payment
	var env envelope
	env.Data = p.decoder(new(decodeScratch))
	if err := json.Unmarshal(scanBody, &env); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var found surprises
		dataSurprises(&found, scanBody, &p, false)
		if len(found) != 0 {
			b.Fatal(found)
		}
	}
}

// dataSurprises walks the body once and reports what encoding/json's
// reading of it holds beyond the SDK's fields: members of the last data
// member (its name in any case), of its quote, never of a string's text.
func TestDataSurprisesReadTheBodyAsEncodingJSONDoes(t *testing.T) {
	quote := `"quote":{"quote_id":"q","amount":"1","fee_ccy":"NGN"}`
	for _, c := range []struct {
		body string
		want []string
	}{
		{`{"success":true,"data":{"id":"p","status":"pending","completed_at":"x",` + quote + `}}`,
			[]string{"data.completed_at", "data.quote.fee_ccy"}},
		{`{"data":{"id":"p","extra":1},"success":true,"Data":{"id":"p","description":"a \"trap\":{\"x\":1}\\","x2":[{"y":"}"}]}}`,
			[]string{"data.x2"}},
		{`{"data":{"extra":1},"data":null}`, nil},
		{` { "data" : { "ID" : "p" , "quote" : null , "Quote_ID" : "q" } } `, nil},
		{`{"stan":"{\"data\":{\"z\":1}}","data":{"id":"p"}}`, nil},
	} {
		var found surprises
		dataSurprises(&found, []byte(c.body), &Payment{Status: PaymentStatusPending}, false)
		var got []string
		for _, s := range found {
			got = append(got, s.Detail)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.body, got, c.want)
		}
	}
}

// pageEvent, the one-walk parse of a listed event, gives what ParseEvent
// gives (the same event, or an error of the same text) on every case, and
// ParseEvent's answer when it cannot tell.
func TestPageEventIsParseEvent(t *testing.T) {
	cases := []string{
		`{"id":"evt_1","event":"payment.completed","created_at":"2025-03-01T10:01:00Z","data":{"id":"p","status":"completed"}}`,
		`{"id":" evt_1 ","type":"payment.failed","created_at":1740823260,"data":null}`,
		`{"id":12345,"event":"payment.completed","event":"payment.failed","extra":{"id":"x"},"data":[1]}`,
		`{"ID":"evt_upper","event":"payment.completed"}`,
		`{"id":"evt_1","Event":"payment.completed"}`,
		`{"i\u0064":"evt_escaped","event":"payment.completed"}`,
		`{"id":"evt_\u00e9","event":"payment.completed","créé":1}`,
		`{"id":"evt_1","event":"payment.completed","created_at":"not a time"}`,
		`{"id":"","event":"payment.completed"}`,
		`{"id":"evt_1"}`,
		`{"id":null,"event":"payment.completed"}`,
		`{"id":true,"event":"payment.completed"}`,
		`{"id":"evt_1","event":{"a":1}}`,
		`{"id":"evt_1","event":"payment.completed","data":{"id":"evt_2","event":"x"},"id":"evt_3"}`,
		`{}`,
	}
	for _, c := range cases {
		got, _, gotErr := pageEvent([]byte(c))
		want, wantErr := ParseEvent([]byte(c))
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Errorf("%s: error %v, ParseEvent's %v", c, gotErr, wantErr)
			continue
		}
		if gotErr != nil {
			continue
		}
		if got.ID != want.ID || got.Type != want.Type || !got.CreatedAt.Equal(want.CreatedAt) ||
			string(got.Data) != string(want.Data) || (got.Data == nil) != (want.Data == nil) ||
			string(got.RawJSON()) != string(want.RawJSON()) {
			t.Errorf("%s: got %+v %s, ParseEvent's %+v %s", c, got, got.Data, want, want.Data)
		}
	}
}
