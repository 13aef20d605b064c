package payments

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

// The one-pass decoder must give what the general decoder gives, whenever it
// takes a body. FuzzDecodeFastMatchesGeneral checks that on every seed in a
// plain `go test`, and on random bodies under -fuzz.

var fastDecodeSeeds = []string{
	`{"success":true,"message":"ok","stan":"s1","data":{"id":"r1","account_name":"Ada","limit":"250000.00","created_at":"2025-03-01T10:00:00Z"}}`,
	`{"data":{"id":"r1"},"success":true}`,
	` { "success" : true , "data" : { "id" : "r1" , "x" : [1, {"a": "}"}] } } `,
	"{\"success\":true,\n\t\"data\":\r\n{\"id\":\"va1\",\"is_active\":true}}",
	`{"success":true,"data":{"id":"p1","amount":"15000.50","currency":"NGN","created_at":"2025-03-01T10:00:00Z","quote":{"quote_id":"q1","amount":"15000.50","fee":"25.00","exchange_rate":"1","total_amount":"15025.50","expires_at":"2025-03-01T10:05:00Z"}}}`,
	`{"success":true,"data":{"id":"p1","amount":"10","quote":{"id":"q2","fees":"1.5","rate":"750.25","amount_to_collect":"11.5","created_at":"2025-03-01T10:00:00Z"}}}`,
	`{"success":true,"data":{"id":"p1","amount":"10","currency":"USD","quote_id":"q3","fee":"0","fees":"2","expires_at":"2025-03-01T10:05:00Z"}}`,
	`{"success":true,"data":{"id":"p1","amount":"10","quote":null,"quote_id":"q4"}}`,
	`{"success":true,"data":{"id":"p1","quote":{"quote_id":"q5","fee":null,"fees":"3"}}}`,
	`{"success":true,"data":{"id":"p1","quote":{"quote_id":"q6","fee":"1","fee":null}}}`,
	`{"success":true,"data":{"id":"p1","quote":{"quote_id":"q7","fee":"abc"}}}`,
	`{"success":true,"data":{"id":"p1","quote":"q8"}}`,
	`{"success":true,"data":{"id":"p1","notes":"\"quote_id\""}}`,
	`{"success":false,"message":"no","data":{"id":"r1"}}`,
	`{"success":true,"data":null}`,
	`{"success":true}`,
	`{"success":true,"Data":{"id":"r1"}}`,
	`{"success":true,"data":{"id":"r1"},"DATA":{"id":"r2"}}`,
	`{"success":true,"data":{"id":"r1"},"data":{"account_name":"B"}}`,
	`{"success":true,"d\u0061ta":{"id":"r1"}}`,
	`{"success":true,"data":{"id":"r\"1\\"}}`,
	`{"success":true,"message":5,"data":{"id":"r1"}}`,
	`{"success":"yes","data":{"id":"r1"}}`,
	`{"success":true,"data":{"id":5}}`,
	`{"success":true,"data":[1,2]}`,
	`{"success":true,"data":"text"}`,
	`{"success":true,"data":{"id":"r1"}} trailing`,
	`{"success":true,"data":{"id":"r1"}`,
	`{"success":true,"data":{"id":"r1"}}}`,
	`{"success":true,"data":}`,
	`{"success":true,"data"`,
	`{"success":true,"data":{"id":"r1`,
	`[{"data":{"id":"r1"}}]`,
	`"data"`,
	``,
}

func FuzzDecodeFastMatchesGeneral(f *testing.F) {
	for _, s := range fastDecodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkFastDecode(t, body, func() any { return new(Recipient) })
		checkFastDecode(t, body, func() any { return new(Payment) })
		checkFastDecode(t, body, func() any { return new(VirtualAccount) })
		checkFastDecode(t, body, func() any { return new(json.RawMessage) })
		checkUnmarshalResource(t, body)
		checkUnquote(t, body)
	})
}

// checkUnquote compares unquoteJSON with json.Unmarshal into a string.
func checkUnquote(t *testing.T, b []byte) {
	t.Helper()
	got, errGot := unquoteJSON(b)
	var want string
	errWant := json.Unmarshal(b, &want)
	if (errGot == nil) != (errWant == nil) || got != want {
		t.Fatalf("unquoteJSON(%q) = %q, %v; json.Unmarshal: %q, %v", b, got, errGot, want, errWant)
	}
}

func TestUnquoteJSON(t *testing.T) {
	for _, s := range []string{
		`"payment.completed"`, `""`, `"2025-03-01T10:00:00Z"`, `"a\"b"`, `"\u00e9t\u00e9"`, `"été"`,
		"\"tab\there\"", `"\ud800"`, "\"\xff\"", `"a"b"`, `"unterminated`, `"`, `5`, `null`, `"del\u007f"`, "\"del\x7f\"",
	} {
		checkUnquote(t, []byte(s))
	}
}

// checkUnmarshalResource compares unmarshalResource with json.Unmarshal on
// body, and on the data member of body when it has one.
func checkUnmarshalResource(t *testing.T, body []byte) {
	t.Helper()
	inputs := [][]byte{body}
	if data, ok := topLevelData(body); ok {
		inputs = append(inputs, data)
	}
	for _, in := range inputs {
		for _, fresh := range []func() resource{
			func() resource { return new(Payment) },
			func() resource { return new(Recipient) },
		} {
			viaWire, plain := fresh(), fresh()
			errWire, errPlain := unmarshalResource(in, viaWire), json.Unmarshal(in, plain)
			if (errWire == nil) != (errPlain == nil) {
				t.Fatalf("%T from %s: unmarshalResource: %v, json.Unmarshal: %v", plain, in, errWire, errPlain)
			}
			if errPlain == nil && !reflect.DeepEqual(viaWire, plain) {
				t.Fatalf("%T from %s:\nunmarshalResource: %+v\njson.Unmarshal:    %+v", plain, in, viaWire, plain)
			}
		}
	}
}

// checkFastDecode decodes body with both decoders, each into a fresh out, and
// compares what they give when the one-pass decoder takes the body.
func checkFastDecode(t *testing.T, body []byte, fresh func() any) {
	t.Helper()
	c := &Client{}
	newResponse := func() *Response { return &Response{StatusCode: http.StatusOK, Header: http.Header{}} }

	fast := &call{out: fresh(), outIsNew: true}
	fr := newResponse()
	if !decodeFast(fast, fr, body) {
		return
	}
	general := &call{out: fresh()}
	gr := newResponse()
	if err := c.decode(general, gr, body, nil); err != nil {
		t.Fatalf("%T: the one-pass decoder took %s, the general one fails: %v", general.out, body, err)
	}
	if !reflect.DeepEqual(fast.out, general.out) {
		t.Fatalf("%T from %s:\none pass: %+v\ngeneral:  %+v", general.out, body, fast.out, general.out)
	}
	if !reflect.DeepEqual(fr, gr) || fast.resp != fr || general.resp != gr {
		t.Fatalf("%T from %s: responses differ:\none pass: %+v\ngeneral:  %+v", general.out, body, fr, gr)
	}
}

// TestDecodeFastTakesThePlainCase guards the benchmarks' premise: the
// answers of the typed operations go through the one-pass decoder.
func TestDecodeFastTakesThePlainCase(t *testing.T) {
	for _, out := range []any{new(Recipient), new(Payment), new(VirtualAccount)} {
		r := &Response{StatusCode: http.StatusOK}
		cl := &call{out: out, outIsNew: true}
		if !decodeFast(cl, r, []byte(fastDecodeSeeds[4])) {
			t.Errorf("%T: the one-pass decoder refused a plain envelope", out)
		}
	}
	if decodeFast(&call{out: new(Payment)}, &Response{}, []byte(fastDecodeSeeds[4])) {
		t.Error("the one-pass decoder took a caller's out (Do)")
	}
}
