package payments_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

// FuzzParseSignatureHeader feeds arbitrary header values to the verifier: it
// must never panic, must answer with one of its sentinel errors, and a header
// made by SignPayload for the same payload and secret must always verify.
func FuzzParseSignatureHeader(f *testing.F) {
	payload := []byte(`{"id":"e1","event":"payment.completed","data":{}}`)
	good := payments.SignPayload(payload, whNow, whSecret)
	for _, seed := range []string{
		good,
		payments.SignPayload(payload, whNow, whSecret, whOtherSecret),
		"",
		"t=",
		"v1=",
		"t=1714557600",
		"t=1714557600,v1=zz",
		"t=+1714557600,v1=00",
		"t=1714557600,t=1714557600,v1=00",
		"t=9223372036854775807,v1=" + good[len(good)-64:],
		"t=1714557600,v0=abc,v1=" + good[len(good)-64:],
		",,,",
		"=,=,=",
		"t=1714557600 ,v1=\x00",
		"garbage",
	} {
		f.Add(seed, payload, whSecret)
	}
	f.Add(good, []byte{}, "s")
	f.Add("t=0,v1=", []byte("\xff\xfe"), "\x00")

	sentinels := []error{
		payments.ErrNoSignatureHeader, payments.ErrMalformedSignatureHeader,
		payments.ErrNoMatchingSignature, payments.ErrTimestampOutOfTolerance,
	}
	f.Fuzz(func(t *testing.T, header string, body []byte, secret string) {
		if secret == "" {
			secret = "s"
		}
		v, err := payments.NewSignatureVerifier([]string{secret}, payments.WithSignatureClock(whClock))
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set(payments.SignatureHeader, header)
		if err := v.Verify(body, h); err != nil {
			known := false
			for _, s := range sentinels {
				known = known || errors.Is(err, s)
			}
			if !known {
				t.Fatalf("Verify returned an error matching no sentinel: %v", err)
			}
		}

		signed := http.Header{}
		signed.Set(payments.SignatureHeader, payments.SignPayload(body, whNow, secret))
		if err := v.Verify(body, signed); err != nil {
			t.Fatalf("a header made by SignPayload does not verify: %v", err)
		}
		signed.Set(payments.SignatureHeader, payments.SignPayload(body, whNow.Add(-time.Minute), "other-"+secret, secret))
		if err := v.Verify(body, signed); err != nil {
			t.Fatalf("a rotation header made by SignPayload does not verify: %v", err)
		}
	})
}

// FuzzConstructEvent feeds arbitrary bodies and headers to ConstructEvent and
// ParseEvent, and the accessors of whatever parses: nothing may panic, and a
// correctly signed body fails only for not being an event.
func FuzzConstructEvent(f *testing.F) {
	for _, seed := range []string{
		`{"id":"e1","event":"payment.completed","created_at":"2024-05-01T10:00:00Z","data":{"id":"p","amount":"1.50","quote":{"quote_id":"q","fee":1}}}`,
		`{"id":"e2","event":"virtual_account.payment_received","data":{"amount":25000.75,"payer":{"account_number":1234567890}}}`,
		`{"id":"e3","event":"recipient.verified","data":{"limit":"100","identification":{}}}`,
		`{"id":"e4","event":"virtual_account.created","data":{"is_active":"yes"}}`,
		`{"id":"e5","type":"unknown.kind","created_at":1714557600,"data":[1,2,3]}`,
		`{"id":"e6","event":"payment.failed","data":{"quote_id":"q","amount":"x"}}`,
		`{"id":7,"event":"payment.completed","data":null}`,
		`{}`, `[]`, `null`, `"x"`, ``, `{"id":"e1"`, `{"id":"\ud800","event":"\u0000"}`,
	} {
		f.Add([]byte(seed), "t=1714557600,v1=00", true)
		f.Add([]byte(seed), "", false)
	}

	f.Fuzz(func(t *testing.T, body []byte, header string, signIt bool) {
		h := http.Header{}
		h.Set(payments.SignatureHeader, header)
		if signIt {
			h.Set(payments.SignatureHeader, payments.SignPayload(body, time.Now(), whSecret))
		}
		ev, err := payments.ConstructEvent(body, h, whSecret)
		if signIt && err != nil && !errors.Is(err, payments.ErrInvalidEvent) {
			t.Fatalf("a signed body failed for another reason than not being an event: %v", err)
		}
		if err == nil && ev == nil {
			t.Fatal("nil event without an error")
		}
		if parsed, perr := payments.ParseEvent(body); perr == nil {
			whTouchAccessors(parsed)
		} else if !errors.Is(perr, payments.ErrInvalidEvent) {
			t.Fatalf("ParseEvent error matches no sentinel: %v", perr)
		}
	})
}

// whTouchAccessors calls every accessor, whatever the kind, so that the
// fuzzer reaches the data decoders.
func whTouchAccessors(ev *payments.Event) {
	_, _ = ev.Payment()
	_, _ = ev.Recipient()
	_, _ = ev.VirtualAccount()
	if vp, err := ev.VirtualAccountPayment(); err == nil {
		_ = vp.String()
		_ = vp.LogValue()
	}
	var anyValue any
	_ = ev.DecodeData(&anyValue)
	_ = ev.LogValue()
	for _, typ := range []payments.EventType{payments.EventPaymentCompleted, payments.EventRecipientCreated,
		payments.EventVirtualAccountUpdated, payments.EventVirtualAccountPaymentReceived} {
		retyped := *ev
		retyped.Type = typ
		_, _ = retyped.Payment()
		_, _ = retyped.Recipient()
		_, _ = retyped.VirtualAccount()
		_, _ = retyped.VirtualAccountPayment()
	}
}
