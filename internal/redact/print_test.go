package redact

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStringMasksShapedSecretsAndEmails(t *testing.T) {
	for in, want := range map[string]string{
		"secret whsec_ZWNobw== echoed":                                        "secret [redacted] echoed",
		"v1=6563686f2d7061796d656e74732d7369676e61747572652d736563726574 bad": "v1=[redacted] bad",
		"write to ada.okafor+pay@mail.example.ng now":                         "write to [redacted] now",
		"id 12345678-1234-4123-8123-123456789012 stays":                       "id 12345678-1234-4123-8123-123456789012 stays",
		"a short hex deadbeef stays":                                          "a short hex deadbeef stays",
	} {
		assert.Equal(t, want, String(in, nil), in)
	}
}

func TestTextKeepsDigits(t *testing.T) {
	assert.Equal(t, "account 0123456789, key [redacted], Bearer [redacted]",
		Text("account 0123456789, key sk_live_Qw3rTy8UiOp, bearer abc", "sk_live_Qw3rTy8UiOp"))
}

func TestHeaderMasksByNameAndByValue(t *testing.T) {
	const key = "sk_live_Qw3rTy8UiOp"
	h := http.Header{
		"Authorization": {"Bearer " + key}, "Set-Cookie": {"s=1"}, "X-Api-Key": {"k"}, "X-Webhook-Signature": {"v1=a"},
		"X-Echo": {"echo " + key}, "X-Account": {"0123456789"}, "X-Request-Id": {"r-1"},
	}
	got := Header(h, key)
	assert.Equal(t, http.Header{
		"Authorization": {Masked}, "Set-Cookie": {Masked}, "X-Api-Key": {Masked}, "X-Webhook-Signature": {Masked},
		"X-Echo": {"echo " + Masked}, "X-Account": {"****6789"}, "X-Request-Id": {"r-1"},
	}, got)
	assert.Equal(t, "Bearer "+key, h.Get("Authorization"), "the header itself is left as it is")
	assert.Nil(t, Header(nil))
}

type printed struct {
	ID      string
	Amount  float64
	Header  http.Header
	Err     error
	Tags    []string
	Hash    [2]byte
	private string
	Next    *printed
}

func (p printed) Format(f fmt.State, _ rune) { FormatFields(f, p, "s3cr3t-value") }
func (p printed) LogValue() slog.Value       { return LogFields(p, "s3cr3t-value") }

func TestFormatFieldsAndLogFieldsMaskEveryTextField(t *testing.T) {
	v := printed{ID: "s3cr3t-value 0123456789", Amount: 25000000, Header: http.Header{"X-Echo": {"s3cr3t-value"}},
		Err: errors.New("no s3cr3t-value"), Tags: []string{"ada@mail.example"}, Hash: [2]byte{1, 2}, private: "s3cr3t-value",
		Next: &printed{ID: "s3cr3t-value"}}
	want := "{ID:[redacted] ****6789 Amount:2.5e+07 Header:map[X-Echo:[[redacted]]] Err:no [redacted] Tags:[[redacted]] " +
		"Hash:[1 2] Next:{ID:[redacted] Amount:0 Header:map[] Err:<nil> Tags:[] Hash:[0 0] Next:<nil>}}"
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%q"} {
		assert.Equal(t, want, fmt.Sprintf(verb, v), verb)
	}
	var b bytes.Buffer
	slog.New(slog.NewJSONHandler(&b, nil)).Info("m", "v", v)
	assert.NotContains(t, b.String(), "s3cr3t-value")
	assert.NotContains(t, b.String(), "0123456789")
	assert.NotContains(t, b.String(), "ada@mail.example")
	assert.Contains(t, b.String(), `"Amount":25000000`)
}
