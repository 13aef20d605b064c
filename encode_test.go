package payments

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/shopspring/decimal"
)

// The params encode.go copies, each with its wire type.
var wireTypes = []struct{ params, wire reflect.Type }{
	{reflect.TypeFor[PaymentInitiateParams](), reflect.TypeFor[initiateWire]()},
	{reflect.TypeFor[RecipientCreateParams](), reflect.TypeFor[recipientCreateWire]()},
	{reflect.TypeFor[RecipientUpdateParams](), reflect.TypeFor[recipientUpdateWire]()},
}

// TestWireTypesMatchTheirParams: a field added to the params, renamed,
// moved or retagged fails here before it is left out of a request.
func TestWireTypesMatchTheirParams(t *testing.T) {
	number := reflect.TypeFor[json.Number]()
	for _, tc := range wireTypes {
		if tc.params.NumField() != tc.wire.NumField() {
			t.Errorf("%v has %d fields, %v %d", tc.params, tc.params.NumField(), tc.wire, tc.wire.NumField())
			continue
		}
		for i := range tc.params.NumField() {
			p, w := tc.params.Field(i), tc.wire.Field(i)
			if p.Name != w.Name || p.Tag != w.Tag {
				t.Errorf("%v field %d is %s `%s`, %v's is %s `%s`", tc.params, i, p.Name, p.Tag, tc.wire, w.Name, w.Tag)
			}
			amount := p.Type == reflect.TypeFor[Amount]() || p.Type == reflect.TypeFor[*Amount]()
			if amount && w.Type != number || !amount && w.Type != p.Type {
				t.Errorf("%v.%s is a %v, %v's a %v", tc.params, p.Name, p.Type, tc.wire, w.Type)
			}
		}
	}
}

// TestWireBodiesAreWhatEncodingJSONWrites: the body encodeBody sends for
// each params type is the bytes json.Marshal writes for the params
// themselves, over random values: strings with characters encoding/json
// escapes (HTML, quotes, control characters, invalid UTF-8, U+2028), amounts
// of every size and scale, pointers nil and set.
func TestWireBodiesAreWhatEncodingJSONWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(48, 1))
	for _, tc := range wireTypes {
		for range 3000 {
			p := reflect.New(tc.params)
			fillRandom(rng, p.Elem())
			want, err := json.Marshal(p.Interface())
			if err != nil {
				t.Fatal(err)
			}
			wire := wireBody(p.Interface(), new(wireScratch))
			if reflect.TypeOf(wire).Elem() != tc.wire {
				t.Fatalf("wireBody(%v) is a %T", tc.params, wire)
			}
			got, err := json.Marshal(wire)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%v encodes as\n%s\nencoding/json writes\n%s", tc.params, got, want)
			}
		}
	}
	// Anything else, nil params included, goes as it is.
	for _, body := range []any{(*PaymentInitiateParams)(nil), (*RecipientCreateParams)(nil), &PaymentConfirmParams{},
		struct{ PaymentInitiateParams }{}} {
		if got := wireBody(body, new(wireScratch)); !reflect.DeepEqual(got, body) {
			t.Errorf("wireBody(%#v) = %#v", body, got)
		}
	}
}

// fillRandom sets every field of v (a struct) to a random value.
func fillRandom(rng *rand.Rand, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeFor[Amount]():
			f.Set(reflect.ValueOf(randomAmount(rng)))
		case f.Kind() == reflect.String:
			f.SetString(randomText(rng))
		case f.Kind() == reflect.Pointer && rng.IntN(3) > 0:
			p := reflect.New(f.Type().Elem())
			if a, ok := p.Interface().(*Amount); ok {
				*a = randomAmount(rng)
			} else {
				fillRandom(rng, p.Elem())
			}
			f.Set(p)
		}
	}
}

func randomAmount(rng *rand.Rand) Amount {
	coef := rng.Int64N(1 << 62)
	if rng.IntN(4) == 0 {
		coef = rng.Int64N(1000)
	}
	if rng.IntN(8) == 0 {
		coef = -coef
	}
	return Amount{Decimal: decimal.New(coef, int32(rng.IntN(50)-25))}
}

func randomText(rng *rand.Rand) string {
	if rng.IntN(4) == 0 {
		return ""
	}
	pieces := []string{"a", "Z", "0", " ", "<", ">", "&", `"`, `\`, "\n", "\x00", "\x7f", "é", "\u2028", "\xff", "NGN", "order-1042"}
	var b []byte
	for range rng.IntN(12) + 1 {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return string(b)
}

// BenchmarkInitiateBody is the body of an Initiate encoded as encoding/json
// writes the params (how=params: Amount's MarshalJSON, then encoding/json's
// scan of its output) and as encodeBody does it (how=wire).
func BenchmarkInitiateBody(b *testing.B) {
	p := &PaymentInitiateParams{Amount: Amount{Decimal: decimal.RequireFromString("15000.50")}, Currency: "NGN",
		RecipientID: "3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11", Description: "Invoice 1042", Reference: "order-1042", Channel: "api"}
	var w wireScratch
	for _, how := range []string{"params", "wire"} {
		b.Run("how="+how, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v := any(p)
				if how == "wire" {
					v = wireBody(p, &w)
				}
				if _, err := json.Marshal(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
