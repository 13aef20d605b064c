package payments

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/paymentsapi/payments-go/internal/benchbaseline"
)

// fastCase is a resource decode reads, with the members its data may have.
type fastCase struct {
	name    string
	op      *operation
	out     func() any // a fresh out value, as the SDK's call makes it
	members []string   // its members, as the service names them
	nested  map[string][]string
}

func fastCases() []fastCase {
	noAgree := func(op *operation) *operation {
		c := *op
		c.agree = nil
		return &c
	}
	quote := []string{"quote_id", "amount", "fee", "exchange_rate", "total_amount", "currency", "expires_at", "created_at"}
	payment := []string{"id", "reference", "status", "amount", "currency", "description", "type", "sub_type", "category",
		"transaction_date", "tags", "is_reversed", "is_completed", "channel", "notes", "created_at", "updated_at",
		"quote", "quote_id", "fee", "exchange_rate", "total_amount", "expires_at", "recipient_id"}
	recipient := []string{"id", "merchant_id", "account_number", "account_name", "account_type", "is_internal_account",
		"account_currency", "account_bank_name", "account_bank_code", "account_country_code", "account_country",
		"identification", "limit", "payment_details", "created_at", "updated_at"}
	return []fastCase{
		{"initiate", noAgree(opPaymentsInitiate), func() any { return new(Payment) }, payment, map[string][]string{"quote": quote}},
		{"confirm", opPaymentsConfirm, func() any { return new(Payment) }, payment, map[string][]string{"quote": quote}},
		{"recipient", noAgree(opRecipientsCreate), func() any { return new(Recipient) }, recipient, map[string][]string{
			"identification":  {"identification_type", "identification_number", "identification_image"},
			"payment_details": {"account_number", "bank_code", "bank_name", "routing_number", "swift_code", "payment_rails"},
		}},
		{"virtual account", noAgree(opVirtualAccountsCreate), func() any { return new(VirtualAccount) },
			[]string{"id", "currency", "account_number", "account_name", "bank_name", "is_active", "created_at"}, nil},
		{"events page", opWebhooksListEvents, func() any { return new(eventPageWire) }, []string{"events", "has_more"}, nil},
		{"trigger", opWebhooksTrigger, func() any { return new(json.RawMessage) }, []string{"event", "queued"}, nil},
		{"do without out", &operation{Operation: Operation{Name: "do"}, dataOptional: true}, func() any { return nil }, []string{"x"}, nil},
	}
}

// fastBody writes a random answer for c: mostly the assumed shape, with
// every kind of departure from it now and then.
type fastBody struct {
	rnd *rand.Rand
	b   strings.Builder
	odd int // 1 in odd departures are made; 0: none
}

// one reports a departure, 1 in n times of g.odd's (rare when n is large);
// never in a clean body.
func (g *fastBody) one(n int) bool { return g.odd > 0 && g.rnd.IntN(n*g.odd) == 0 }

func (g *fastBody) space() {
	if g.rnd.IntN(8) == 0 {
		g.b.WriteString([]string{" ", "\n\t", "\r\n  "}[g.rnd.IntN(3)])
	}
}

// name is name, or now and then a variant encoding/json may still match.
func (g *fastBody) name(name string) string {
	if !g.one(30) {
		return name
	}
	switch g.rnd.IntN(5) {
	case 0:
		return strings.ToUpper(name)
	case 1:
		return `\u00` + fmt.Sprintf("%x", name[0]) + name[1:] // escaped
	case 2:
		return strings.Replace(name, "s", "ſ", 1) // folds to s in encoding/json
	case 3:
		return name + "_x"
	}
	return "other"
}

var fastValues = []string{
	`"plain"`, `""`, `"Ada Okafor"`, `"Adé Ọkafọ"`, `"a\"b"`, `"\u0041"`, "\"bad \xff utf8\"", "\"ctl \x01\"",
	`"15000.50"`, `"0"`, `"-1"`, `"1e3"`, `"abc"`, `15000.5`, `0`, `-0.5e3`, `1E+2`, `01`, `1.`, `-`,
	`"2025-03-01T10:00:00Z"`, `"2025-03-01"`, `true`, `false`, `null`, `nul`, `tru`,
	`{}`, `{"a":1}`, `[]`, `[1,"x",null]`, `{"a":`, `[1,]`, `"pending"`, `"weird_status"`,
	`"\ud800"`, `"\/"`, `"\x"`,
}

// value writes a value for member name of c (nested: the names of its
// members when it is an object).
func (g *fastBody) value(name string, nested []string) {
	switch {
	case nested != nil && !g.one(5):
		g.object(nested, nil)
	case name == "events" && !g.one(5):
		g.b.WriteString("[")
		for i := range g.rnd.IntN(3) {
			if i > 0 {
				g.b.WriteString(",")
			}
			if g.one(6) {
				g.b.WriteString(fastValues[g.rnd.IntN(len(fastValues))])
				continue
			}
			g.b.WriteString(`{"id":"evt_1","event":"payment.completed","created_at":"2025-03-01T10:01:00Z","data":{"id":"p","amount":"1"}}`)
		}
		g.b.WriteString("]")
	case !g.one(2):
		g.b.WriteString(typical(name))
	default:
		g.b.WriteString(fastValues[g.rnd.IntN(len(fastValues))])
	}
}

// typical is a value of the type the service is assumed to send for name.
func typical(name string) string {
	switch {
	case strings.HasPrefix(name, "is_") || name == "queued" || name == "has_more":
		return "true"
	case strings.HasSuffix(name, "_at") || name == "transaction_date":
		return `"2025-03-01T10:00:00Z"`
	case name == "amount" || name == "fee" || name == "total_amount" || name == "limit":
		return `"15000.50"`
	case name == "exchange_rate":
		return `"1.5"`
	case name == "status":
		return `"pending"`
	}
	return `"` + name + `-value"`
}

func (g *fastBody) object(members []string, nested map[string][]string) {
	g.b.WriteString("{")
	g.space()
	n := 0
	for _, m := range members {
		if g.rnd.IntN(6) == 0 {
			continue
		}
		if n > 0 {
			g.b.WriteString(",")
			g.space()
		}
		n++
		g.b.WriteString(`"` + g.name(m) + `"`)
		g.space()
		g.b.WriteString(":")
		g.space()
		g.value(m, nested[m])
		g.space()
		if g.one(40) { // a repeated member
			g.b.WriteString(`,"` + m + `":`)
			g.value(m, nested[m])
		}
	}
	g.b.WriteString("}")
}

func (g *fastBody) envelope(c fastCase) []byte {
	g.b.Reset()
	g.odd = []int{0, 1, 8, 40}[g.rnd.IntN(4)]
	g.space()
	g.b.WriteString("{")
	members := []string{"success", "message", "stan", "data"}
	g.rnd.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	if g.one(3) {
		members = append(members, []string{"code", "errors", "error", "timestamp", "Data", "meta"}[g.rnd.IntN(6)])
	}
	for i, m := range members {
		if i > 0 {
			g.b.WriteString(",")
		}
		g.space()
		g.b.WriteString(`"` + g.name(m) + `":`)
		g.space()
		switch {
		case m == "data" && !g.one(4):
			g.object(c.members, c.nested)
		case m == "success" && !g.one(4):
			g.b.WriteString("true")
		case m == "message" || m == "stan":
			if g.one(2) {
				g.b.WriteString(fastValues[g.rnd.IntN(len(fastValues))])
			} else {
				g.b.WriteString(`"Payment initiated"`)
			}
		default:
			g.b.WriteString(fastValues[g.rnd.IntN(len(fastValues))])
		}
	}
	g.space()
	g.b.WriteString("}")
	g.space()
	body := []byte(g.b.String())
	switch {
	case g.one(4) && len(body) > 1: // cut short
		body = body[:g.rnd.IntN(len(body))]
	case g.one(4): // one byte changed
		body[g.rnd.IntN(len(body))] = "{}[],:\"\\ x0"[g.rnd.IntN(11)]
	case g.one(6):
		body = append(body, `{}`...)
	}
	return body
}

// decoded is what decode made of a body: everything a caller or a log sees.
type decoded struct {
	Err          string
	Out          any
	Stan, Msg    string
	Found        surprises
	Body         string
	HasMore      bool
	ParsedEvents int
}

func decodeOnce(c *Client, fc fastCase, body []byte, slow bool) decoded {
	out := fc.out()
	r := &Response{StatusCode: fc.op.status, Header: http.Header{"Content-Type": {"application/json"}}}
	if fc.op.status == 0 {
		r.StatusCode = http.StatusOK
	}
	var found surprises
	err := c.decode(r, body, nil, out, fc.op, &found, &decodeScratch{slow: slow})
	d := decoded{Out: out, Stan: r.Stan, Msg: r.Message, Found: found, Body: string(r.Body)}
	if err != nil {
		d.Err = err.Error()
	}
	switch o := out.(type) {
	case *Payment:
		o.APIResource = nil // a function: compared through RawJSON below
		if err == nil {
			d.Body = string(r.Body)
		}
	case *Recipient:
		o.APIResource = nil
	case *VirtualAccount:
		o.APIResource = nil
	case *eventPageWire:
		d.HasMore, d.ParsedEvents = o.hasMore, len(o.parsed)
		d.Out = [2]any{o.Events, string(o.HasMore)}
	}
	return d
}

// TestFastDecodeIsEncodingJSON decodes random answers for every resource
// the shortcut reads (fastdecode.go) twice, with it and with encoding/json
// alone, and compares all that decode leaves: the error and its text, the
// resource, the stan and message, and every surprise. The bodies are mostly
// the assumed shape, with every departure the shortcut must leave to
// encoding/json: names in another case, escaped or folded, unknown and
// repeated members, escaped and invalid UTF-8 strings, values of other
// types, invalid JSON, null everywhere.
func TestFastDecodeIsEncodingJSON(t *testing.T) {
	c, err := NewClient("sk_test_fastdecode", WithBaseURL("http://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	g := &fastBody{rnd: rand.New(rand.NewPCG(48, 2))}
	for _, fc := range fastCases() {
		taken, left := 0, 0
		for range 6000 {
			body := g.envelope(fc)
			if ok, _ := fastTakes(fc, body); ok {
				taken++
			} else {
				left++
			}
			fast, slow := decodeOnce(c, fc, body, false), decodeOnce(c, fc, body, true)
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%s: %s\nwith the shortcut: %+v\nencoding/json:     %+v", fc.name, body, fast, slow)
			}
		}
		t.Logf("%s: %d bodies taken by the shortcut, %d left to encoding/json", fc.name, taken, left)
		if taken < 600 || left < 600 {
			t.Errorf("%s: %d taken, %d left: the bodies no longer test both ways", fc.name, taken, left)
		}
	}
}

// fastTakes reports whether the shortcut takes body for fc's resource, and
// returns that resource as it decoded it.
func fastTakes(fc fastCase, body []byte) (bool, any) {
	var s decodeScratch
	out := fc.out()
	var fin finisher
	env := envelope{Data: out}
	switch o := out.(type) {
	case wired:
		fin = o.decoder(&s)
	case nil:
		env.Data = &discardData
	case *json.RawMessage:
		env.Data = (*dataView)(o)
	}
	target, ok := fastTargetOf(out, fin, &s)
	if !ok || !fastEnvelope(body, &env, target) {
		return false, nil
	}
	fastCommit(out, &s)
	if fin != nil && env.Data != nil {
		fin.finish(false)
	}
	return true, out
}

// TestFastDecodeLeavesNoUnknownMember: a body the shortcut takes has no
// member the surprise scan reports (so decode skips that scan for it), for
// every member name of the resources it reads and others.
func TestFastDecodeLeavesNoUnknownMember(t *testing.T) {
	g := &fastBody{rnd: rand.New(rand.NewPCG(48, 3))}
	for _, fc := range fastCases()[:5] {
		for range 3000 {
			body := g.envelope(fc)
			taken, out := fastTakes(fc, body)
			if !taken {
				continue
			}
			var found surprises
			dataSurprises(&found, body, out, false)
			for _, f := range found {
				if f.Kind == SurpriseUnknownField {
					t.Fatalf("%s: the shortcut took %s, which has %s", fc.name, body, f.Detail)
				}
			}
		}
	}
}

// BenchmarkDecodeInitiate is decode of the initiate answer alone, with the
// shortcut and with encoding/json alone (what every successful initiate
// paid before it), beside the baseline's json.Unmarshal of the same body.
func BenchmarkDecodeInitiate(b *testing.B) {
	c, err := NewClient("sk_test_fastdecode", WithBaseURL("http://127.0.0.1:1"))
	if err != nil {
		b.Fatal(err)
	}
	op := *opPaymentsInitiate
	op.agree = nil
	for _, slow := range []bool{false, true} {
		b.Run(fmt.Sprintf("encoding-json-alone=%v", slow), func(b *testing.B) {
			s := decodeScratch{slow: slow}
			b.ReportAllocs()
			for b.Loop() {
				var found surprises
				r := &Response{StatusCode: http.StatusOK}
				if err := c.decode(r, scanBody, nil, new(Payment), &op, &found, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var env struct {
				Success bool                  `json:"success"`
				Message string                `json:"message"`
				Stan    string                `json:"stan"`
				Data    benchbaseline.Payment `json:"data"`
			}
			if err := json.Unmarshal(scanBody, &env); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzFastDecode: for any body, decode with the shortcut leaves what
// encoding/json alone leaves, for every resource the shortcut reads.
func FuzzFastDecode(f *testing.F) {
	c, err := NewClient("sk_test_fastdecode", WithBaseURL("http://127.0.0.1:1"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(scanBody)
	g := &fastBody{rnd: rand.New(rand.NewPCG(48, 4))}
	for _, fc := range fastCases() {
		for range 8 {
			f.Add(g.envelope(fc))
		}
	}
	cases := fastCases()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, fc := range cases {
			fast, slow := decodeOnce(c, fc, body, false), decodeOnce(c, fc, body, true)
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%s: %q\nwith the shortcut: %+v\nencoding/json:     %+v", fc.name, body, fast, slow)
			}
		}
	})
}
