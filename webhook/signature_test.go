package webhook_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

const (
	whSecret      = "whsec_test_K3y9Pq2Lm8Vn4Rt7"
	whOtherSecret = "whsec_test_N3wS3cr3tAfterR0tat"
)

// whNow is the fixed clock of the verification tests.
var whNow = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

func whClock() time.Time { return whNow }

func whVerifier(t *testing.T, secrets ...string) *webhook.SignatureVerifier {
	t.Helper()
	v, err := webhook.NewSignatureVerifier(secrets, webhook.WithSignatureClock(whClock))
	require.NoError(t, err)
	return v
}

func whHeader(value string) http.Header {
	h := http.Header{}
	h.Set(webhook.SignatureHeader, value)
	return h
}

func whPayload() []byte {
	return whEventJSON(whEventID, payments.EventPaymentCompleted, `{"id":"p-1","amount":"100.00","currency":"NGN"}`)
}

// whSignatureOf returns the first v1 value of a header made by SignPayload.
func whSignatureOf(t *testing.T, header string) string {
	t.Helper()
	_, after, ok := strings.Cut(header, "v1=")
	require.True(t, ok)
	sig, _, _ := strings.Cut(after, ",")
	return sig
}

// whAssertNoSecrets checks that an error message repeats neither a secret
// nor a signature.
func whAssertNoSecrets(t *testing.T, err error, header string) {
	t.Helper()
	msg := err.Error()
	assert.NotContains(t, msg, whSecret)
	assert.NotContains(t, msg, whOtherSecret)
	if strings.Contains(header, "v1=") && len(whSignatureOf(t, header)) >= 8 {
		assert.NotContains(t, msg, whSignatureOf(t, header))
	}
}

// whHMAC computes the documented scheme independently of SignPayload:
// hex(HMAC-SHA256(secret, "<t>.<payload>")).
func whHMAC(ts string, payload []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(payload)
	return hex.EncodeToString(m.Sum(nil))
}

func TestSignPayloadFollowsTheDocumentedScheme(t *testing.T) {
	payload := whPayload()
	ts := fmt.Sprint(whNow.Unix())
	assert.Equal(t, "t="+ts+",v1="+whHMAC(ts, payload, whSecret), webhook.SignPayload(payload, whNow, whSecret))
	assert.Equal(t, "t="+ts+",v1="+whHMAC(ts, payload, whSecret)+",v1="+whHMAC(ts, payload, whOtherSecret),
		webhook.SignPayload(payload, whNow, whSecret, whOtherSecret))
}

func TestVerifyValidDelivery(t *testing.T) {
	payload := whPayload()
	header := webhook.SignPayload(payload, whNow, whSecret)
	require.NoError(t, whVerifier(t, whSecret).Verify(payload, whHeader(header)))
}

func TestVerifyRejectsTampering(t *testing.T) {
	payload := whPayload()
	header := webhook.SignPayload(payload, whNow, whSecret)
	v := whVerifier(t, whSecret)

	t.Run("tampered body", func(t *testing.T) {
		tampered := []byte(strings.Replace(string(payload), "100.00", "900.00", 1))
		err := v.Verify(tampered, whHeader(header))
		assert.ErrorIs(t, err, webhook.ErrNoMatchingSignature)
		whAssertNoSecrets(t, err, header)
	})
	t.Run("body with an added space", func(t *testing.T) {
		assert.ErrorIs(t, v.Verify(append(payload, ' '), whHeader(header)), webhook.ErrNoMatchingSignature)
	})
	t.Run("tampered signature", func(t *testing.T) {
		sig := whSignatureOf(t, header)
		flipped := "0"
		if sig[0] == '0' {
			flipped = "1"
		}
		bad := strings.Replace(header, sig, flipped+sig[1:], 1)
		err := v.Verify(payload, whHeader(bad))
		assert.ErrorIs(t, err, webhook.ErrNoMatchingSignature)
		whAssertNoSecrets(t, err, bad)
	})
	t.Run("tampered timestamp", func(t *testing.T) {
		// Same signature, another t: the timestamp is part of the signed text.
		bad := strings.Replace(header, fmt.Sprintf("t=%d", whNow.Unix()), fmt.Sprintf("t=%d", whNow.Unix()-1), 1)
		assert.ErrorIs(t, v.Verify(payload, whHeader(bad)), webhook.ErrNoMatchingSignature)
	})
	t.Run("wrong secret", func(t *testing.T) {
		other := webhook.SignPayload(payload, whNow, "whsec_attacker_guess")
		err := v.Verify(payload, whHeader(other))
		assert.ErrorIs(t, err, webhook.ErrNoMatchingSignature)
		whAssertNoSecrets(t, err, other)
	})
}

func TestVerifySecretRotation(t *testing.T) {
	payload := whPayload()
	signedByBoth := webhook.SignPayload(payload, whNow, whSecret, whOtherSecret)
	signedByOld := webhook.SignPayload(payload, whNow, whSecret)
	signedByNew := webhook.SignPayload(payload, whNow, whOtherSecret)
	require.Equal(t, 2, strings.Count(signedByBoth, "v1="))

	t.Run("header with two v1 entries", func(t *testing.T) {
		assert.NoError(t, whVerifier(t, whSecret).Verify(payload, whHeader(signedByBoth)), "the old secret matches the first entry")
		assert.NoError(t, whVerifier(t, whOtherSecret).Verify(payload, whHeader(signedByBoth)), "the new secret matches the second entry")
		assert.ErrorIs(t, whVerifier(t, "whsec_unrelated").Verify(payload, whHeader(signedByBoth)), webhook.ErrNoMatchingSignature)
	})
	t.Run("verifier with two secrets", func(t *testing.T) {
		v := whVerifier(t, whSecret, whOtherSecret)
		assert.NoError(t, v.Verify(payload, whHeader(signedByOld)))
		assert.NoError(t, v.Verify(payload, whHeader(signedByNew)))
		assert.NoError(t, v.Verify(payload, whHeader(signedByBoth)))
		unrelated := webhook.SignPayload(payload, whNow, "whsec_unrelated")
		assert.ErrorIs(t, v.Verify(payload, whHeader(unrelated)), webhook.ErrNoMatchingSignature)
	})
}

func TestVerifyTimestampTolerance(t *testing.T) {
	payload := whPayload()
	v := whVerifier(t, whSecret)
	cases := map[string]struct {
		signedAt time.Time
		want     error
	}{
		"exactly 5 minutes old":   {whNow.Add(-5 * time.Minute), nil},
		"exactly 5 minutes ahead": {whNow.Add(5 * time.Minute), nil},
		"old":                     {whNow.Add(-5*time.Minute - time.Second), webhook.ErrTimestampOutOfTolerance},
		"a day old":               {whNow.Add(-24 * time.Hour), webhook.ErrTimestampOutOfTolerance},
		"future":                  {whNow.Add(5*time.Minute + time.Second), webhook.ErrTimestampOutOfTolerance},
		"epoch":                   {time.Unix(0, 0), webhook.ErrTimestampOutOfTolerance},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			header := webhook.SignPayload(payload, tc.signedAt, whSecret)
			err := v.Verify(payload, whHeader(header))
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tc.want)
			whAssertNoSecrets(t, err, header)
		})
	}

	t.Run("far future t does not overflow", func(t *testing.T) {
		for _, ts := range []string{"9223372036854775807", "1099511627777", "99999999999"} {
			header := "t=" + ts + ",v1=" + whHMAC(ts, payload, whSecret)
			assert.ErrorIs(t, v.Verify(payload, whHeader(header)), webhook.ErrTimestampOutOfTolerance, ts)
		}
	})

	t.Run("custom tolerance", func(t *testing.T) {
		strict, err := webhook.NewSignatureVerifier([]string{whSecret},
			webhook.WithSignatureTolerance(30*time.Second), webhook.WithSignatureClock(whClock))
		require.NoError(t, err)
		header := webhook.SignPayload(payload, whNow.Add(-time.Minute), whSecret)
		assert.ErrorIs(t, strict.Verify(payload, whHeader(header)), webhook.ErrTimestampOutOfTolerance)
		assert.NoError(t, v.Verify(payload, whHeader(header)))
	})
}

func TestVerifyMissingHeader(t *testing.T) {
	v := whVerifier(t, whSecret)
	assert.ErrorIs(t, v.Verify(whPayload(), http.Header{}), webhook.ErrNoSignatureHeader)
	assert.ErrorIs(t, v.Verify(whPayload(), nil), webhook.ErrNoSignatureHeader)
	other := http.Header{}
	other.Set("Stripe-Signature", webhook.SignPayload(whPayload(), whNow, whSecret))
	assert.ErrorIs(t, v.Verify(whPayload(), other), webhook.ErrNoSignatureHeader)
}

func TestVerifyMalformedHeaders(t *testing.T) {
	payload := whPayload()
	good := webhook.SignPayload(payload, whNow, whSecret)
	sig := whSignatureOf(t, good)
	ts := fmt.Sprint(whNow.Unix())
	cases := []struct {
		name, header string
		want         error
	}{
		{"empty", "", webhook.ErrNoSignatureHeader},
		{"blank", "   ", webhook.ErrNoSignatureHeader},
		{"no t", "v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"no v1", "t=" + ts, webhook.ErrMalformedSignatureHeader},
		{"only another scheme", "t=" + ts + ",v0=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t empty", "t=,v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t not an integer", "t=abc,v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t with a fraction", "t=" + ts + ".5,v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t in exponent form", "t=1.7e9,v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t with plus sign", "t=+" + ts + ",v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t negative", "t=-" + ts + ",v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t with inner space", "t= " + ts + ",v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t with split digits", "t=17 14557600,v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t with underscores", "t=1_714_557_600,v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t hexadecimal", "t=0x66321C20,v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"t overflows int64", "t=99999999999999999999,v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"duplicate t", "t=" + ts + ",t=" + ts + ",v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"duplicate t with other value", "t=" + ts + ",v1=" + sig + ",t=1", webhook.ErrMalformedSignatureHeader},
		{"non-hex v1", "t=" + ts + ",v1=" + strings.Repeat("zz", 32), webhook.ErrMalformedSignatureHeader},
		{"short v1", "t=" + ts + ",v1=" + sig[:62], webhook.ErrMalformedSignatureHeader},
		{"odd-length v1", "t=" + ts + ",v1=" + sig[:63], webhook.ErrMalformedSignatureHeader},
		{"empty v1", "t=" + ts + ",v1=", webhook.ErrMalformedSignatureHeader},
		{"garbage", "garbage", webhook.ErrMalformedSignatureHeader},
		{"semicolons", "t=" + ts + ";v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"empty entry", "t=" + ts + ",,v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"empty key", "t=" + ts + ",=x,v1=" + sig, webhook.ErrMalformedSignatureHeader},
		{"too many entries", "t=" + ts + strings.Repeat(",v1="+sig, 40), webhook.ErrMalformedSignatureHeader},
	}
	v := whVerifier(t, whSecret)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Verify(payload, whHeader(tc.header))
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			for _, other := range []error{webhook.ErrNoSignatureHeader, webhook.ErrMalformedSignatureHeader, webhook.ErrNoMatchingSignature, webhook.ErrTimestampOutOfTolerance} {
				if other != tc.want {
					assert.False(t, errors.Is(err, other), "also matches %v", other)
				}
			}
			whAssertNoSecrets(t, err, good)
		})
	}
}

func TestVerifyAcceptsWellFormedVariants(t *testing.T) {
	payload := whPayload()
	good := webhook.SignPayload(payload, whNow, whSecret)
	sig := whSignatureOf(t, good)
	ts := fmt.Sprint(whNow.Unix())
	v := whVerifier(t, whSecret)

	for name, header := range map[string]string{
		"unknown schemes are ignored":  "t=" + ts + ",v0=not-hex-at-all,v1=" + sig + ",v2=abc",
		"v1 before t":                  "v1=" + sig + ",t=" + ts,
		"spaces around entries":        " t=" + ts + " , v1=" + sig + " ",
		"upper-case hex":               "t=" + ts + ",v1=" + strings.ToUpper(sig),
		"a stale v1 beside a good one": "t=" + ts + ",v1=" + strings.Repeat("ab", 32) + ",v1=" + sig,
		"leading zeros in t":           "t=00" + ts + ",v1=" + whHMAC("00"+ts, payload, whSecret),
	} {
		assert.NoError(t, v.Verify(payload, whHeader(header)), name)
	}

	t.Run("header split over two lines", func(t *testing.T) {
		h := http.Header{}
		h.Add(webhook.SignatureHeader, "t="+ts)
		h.Add(webhook.SignatureHeader, "v1="+sig)
		assert.NoError(t, v.Verify(payload, h))
	})
	t.Run("hand-built map with a lower-case key", func(t *testing.T) {
		h := http.Header{"payments-signature": {good}}
		assert.NoError(t, v.Verify(payload, h))
	})
}

func TestNewSignatureVerifierRejectsBadConfig(t *testing.T) {
	for name, call := range map[string]func() (*webhook.SignatureVerifier, error){
		"no secrets": func() (*webhook.SignatureVerifier, error) { return webhook.NewSignatureVerifier(nil) },
		"an empty secret": func() (*webhook.SignatureVerifier, error) {
			return webhook.NewSignatureVerifier([]string{whSecret, ""})
		},
		"zero tolerance": func() (*webhook.SignatureVerifier, error) {
			return webhook.NewSignatureVerifier([]string{whSecret}, webhook.WithSignatureTolerance(0))
		},
		"negative tolerance": func() (*webhook.SignatureVerifier, error) {
			return webhook.NewSignatureVerifier([]string{whSecret}, webhook.WithSignatureTolerance(-time.Second))
		},
	} {
		v, err := call()
		assert.ErrorIs(t, err, payments.ErrInvalidConfig, name)
		assert.Nil(t, v, name)
	}
	// Each says what to do: which secret to give, or to check.
	_, err := webhook.NewSignatureVerifier([]string{""})
	assert.ErrorContains(t, err, "give this endpoint's signing secret")
	assert.ErrorContains(t, webhook.ErrNoMatchingSignature, "check that the verifier has this endpoint's signing secret")
}

func TestSignatureVerifierNeverPrintsSecrets(t *testing.T) {
	v := whVerifier(t, whSecret, whOtherSecret)
	for _, s := range []string{fmt.Sprint(v), fmt.Sprintf("%+v", v), fmt.Sprintf("%#v", v), fmt.Sprintf("%v", *v), v.LogValue().String()} {
		assert.NotContains(t, s, whSecret)
		assert.NotContains(t, s, whOtherSecret)
		assert.NotContains(t, s, "whsec")
	}
}

func TestConstructEvent(t *testing.T) {
	payload := whPayload()
	header := whHeader(webhook.SignPayload(payload, time.Now(), whSecret))

	ev, err := webhook.ConstructEvent(payload, header, whSecret)
	require.NoError(t, err)
	assert.Equal(t, whEventID, ev.ID)
	assert.Equal(t, payments.EventPaymentCompleted, ev.Type)

	ev, err = webhook.ConstructEvent(payload, header, whOtherSecret, whSecret)
	require.NoError(t, err, "rotation: any of the secrets")
	assert.Equal(t, whEventID, ev.ID)

	_, err = webhook.ConstructEvent(append([]byte(nil), payload[:len(payload)-1]...), header, whSecret)
	assert.ErrorIs(t, err, webhook.ErrNoMatchingSignature)

	_, err = webhook.ConstructEvent(payload, http.Header{}, whSecret)
	assert.ErrorIs(t, err, webhook.ErrNoSignatureHeader)

	_, err = webhook.ConstructEvent(payload, header)
	assert.ErrorIs(t, err, payments.ErrInvalidConfig, "no secret is a configuration error, not a pass")

	old := whHeader(webhook.SignPayload(payload, time.Now().Add(-time.Hour), whSecret))
	_, err = webhook.ConstructEvent(payload, old, whSecret)
	assert.ErrorIs(t, err, webhook.ErrTimestampOutOfTolerance)

	notAnEvent := []byte(`{"hello":"world"}`)
	_, err = webhook.ConstructEvent(notAnEvent, whHeader(webhook.SignPayload(notAnEvent, time.Now(), whSecret)), whSecret)
	assert.ErrorIs(t, err, payments.ErrInvalidEvent)
}

func TestZeroSignatureVerifierRefusesEverything(t *testing.T) {
	var v webhook.SignatureVerifier
	payload := whPayload()
	assert.ErrorIs(t, v.Verify(payload, whHeader(webhook.SignPayload(payload, time.Now(), whSecret))), webhook.ErrNoMatchingSignature)
	assert.ErrorIs(t, v.Verify(payload, whHeader(webhook.SignPayload(payload, time.Now(), ""))), webhook.ErrNoMatchingSignature)
}

// FuzzParseSignatureHeader feeds arbitrary header values to the verifier: it
// must never panic, must answer with one of its sentinel errors, and a header
// made by SignPayload for the same payload and secret must always verify.
func FuzzParseSignatureHeader(f *testing.F) {
	payload := []byte(`{"id":"e1","event":"payment.completed","data":{}}`)
	good := webhook.SignPayload(payload, whNow, whSecret)
	for _, seed := range []string{
		good,
		webhook.SignPayload(payload, whNow, whSecret, whOtherSecret),
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
		webhook.ErrNoSignatureHeader, webhook.ErrMalformedSignatureHeader,
		webhook.ErrNoMatchingSignature, webhook.ErrTimestampOutOfTolerance,
	}
	f.Fuzz(func(t *testing.T, header string, body []byte, secret string) {
		if secret == "" {
			secret = "s"
		}
		v, err := webhook.NewSignatureVerifier([]string{secret}, webhook.WithSignatureClock(whClock))
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set(webhook.SignatureHeader, header)
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
		signed.Set(webhook.SignatureHeader, webhook.SignPayload(body, whNow, secret))
		if err := v.Verify(body, signed); err != nil {
			t.Fatalf("a header made by SignPayload does not verify: %v", err)
		}
		signed.Set(webhook.SignatureHeader, webhook.SignPayload(body, whNow.Add(-time.Minute), "other-"+secret, secret))
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
		h.Set(webhook.SignatureHeader, header)
		if signIt {
			h.Set(webhook.SignatureHeader, webhook.SignPayload(body, time.Now(), whSecret))
		}
		ev, err := webhook.ConstructEvent(body, h, whSecret)
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
		_ = fmt.Sprint(*vp)
		_ = vp.LogValue()
	}
	var anyValue any
	_ = ev.DecodeData(&anyValue)
	_ = fmt.Sprint(ev)
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

// A delivery signed with the other scheme than the verifier's is refused
// with an error that names both schemes and how to switch, and the handler's
// 401 log line carries that hint; the errors still match each scheme's "no
// header" sentinel.
func TestVerifiersHintAtTheOtherScheme(t *testing.T) {
	const stdSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := whEventJSON(whEventID, payments.EventPaymentCompleted, `{"id":"p-1"}`)
	now := time.Now()
	standardHeaders, err := webhook.SignStandard(whEventID, now, body, stdSecret)
	require.NoError(t, err)
	paymentsHeaders := http.Header{webhook.SignatureHeader: {webhook.SignPayload(body, now, "whsec_test")}}

	pv, err := webhook.NewSignatureVerifier([]string{"whsec_test"})
	require.NoError(t, err)
	err = pv.Verify(body, standardHeaders)
	assert.ErrorIs(t, err, webhook.ErrNoSignatureHeader)
	assert.EqualError(t, err, "webhook: no Payments-Signature header, but Standard Webhooks headers (webhook-signature): this receiver expects the Payments-Signature scheme; use a StandardVerifier (the example receiver: PAYMENTS_WEBHOOK_SCHEME=standard)")
	assert.EqualError(t, pv.Verify(body, http.Header{}), "webhook: has no Payments-Signature header", "no hint without the other scheme's headers")

	sv, err := webhook.NewStandardVerifier([]string{stdSecret})
	require.NoError(t, err)
	err = sv.Verify(body, paymentsHeaders)
	assert.ErrorIs(t, err, webhook.ErrMissingStandardHeader)
	assert.EqualError(t, err, "webhook: no Standard Webhooks headers, but a Payments-Signature header: this receiver expects Standard Webhooks; use a SignatureVerifier (the example receiver: PAYMENTS_WEBHOOK_SCHEME=payments, the default)")

	var logs bytes.Buffer
	h := webhook.NewHandler(pv, func(context.Context, *payments.Event) error { return nil },
		webhook.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	for k, v := range standardHeaders {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Contains(t, logs.String(), "PAYMENTS_WEBHOOK_SCHEME=standard")
	assert.NotContains(t, rec.Body.String(), "Standard", "the answer never says why")
}

// A Standard Webhooks verifier refuses the hex secret of the other scheme,
// which is valid base64 too and would otherwise never match.
func TestStandardVerifierRefusesAHexSecret(t *testing.T) {
	_, err := webhook.NewStandardVerifier([]string{"whsec_" + strings.Repeat("0123456789abcdef", 4)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is hex, the form of a Payments-Signature secret")
	assert.NotContains(t, err.Error(), "0123456789abcdef")
}
