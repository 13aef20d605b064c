package webhook_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/webhook"
)

// The test vector shared by the reference libraries of the specification,
// repository standard-webhooks/standard-webhooks:
//
//   - libraries/go/webhook_test.go, TestWebhookSign (and
//     libraries/go/webhook_symmetric_test.go, TestSymmetricWebhookSign);
//   - libraries/python/tests/test_webhooks.py, test_sign_function;
//   - libraries/javascript/src/webhook.test.ts, "sign function works".
//
// All three sign swID at swVectorTime with swSecret and expect swVectorSig.
// The same files use the secret without its prefix (swSecretRaw) in every
// verification test.
const (
	swSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	swSecretRaw = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	swID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	swPayload   = `{"test": 2432232314}`
	swVectorSig = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	// swWrongSig is the "invalid signature" of all three libraries'
	// verification tests (libraries/go/webhook_test.go "invalid signature is
	// invalid", test_webhooks.py test_multi_sig_payload_is_valid,
	// webhook.test.ts "multi sig payload is valid"): well formed, but a
	// signature of something else.
	swWrongSig = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="
	// swOtherSecret is a second key, for rotation tests.
	swOtherSecret = "whsec_c2Vjb25kLWtleS1mb3Itcm90YXRpb24tdGVzdHM="
)

var swVectorTime = time.Unix(1614265330, 0)

// swNow is the fixed clock of these tests: the vector's signing time.
func swNow() time.Time { return swVectorTime }

func swVerifier(t testing.TB, secrets ...string) *webhook.StandardVerifier {
	t.Helper()
	v, err := webhook.NewStandardVerifier(secrets, webhook.WithSignatureClock(swNow))
	require.NoError(t, err)
	return v
}

// swHeader builds the three headers by hand, as a hand-written test or
// another sender's library would.
func swHeader(id, ts, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", sig)
	return h
}

// swSign computes the documented scheme independently of SignStandard:
// "v1," + base64(HMAC-SHA256(base64-decoded key, "<id>.<ts>.<body>")).
func swSign(t testing.TB, secret, id, ts string, body []byte) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	require.NoError(t, err)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func swSignAt(t testing.TB, at time.Time, body []byte, secret string) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	return swHeader(swID, ts, swSign(t, secret, swID, ts, body))
}

// swAssertClean checks that a message repeats no secret and no signature.
func swAssertClean(t testing.TB, msg string, header http.Header) {
	t.Helper()
	for _, s := range []string{swSecret, swSecretRaw, swOtherSecret, strings.TrimPrefix(swOtherSecret, "whsec_")} {
		assert.NotContains(t, msg, s)
	}
	for _, entry := range strings.Fields(header.Get("webhook-signature")) {
		if _, sig, _ := strings.Cut(entry, ","); len(sig) >= 8 {
			assert.NotContains(t, msg, sig)
		}
	}
}

func TestStandardReferenceVectors(t *testing.T) {
	body := []byte(swPayload)
	ts := strconv.FormatInt(swVectorTime.Unix(), 10)

	t.Run("sign", func(t *testing.T) {
		assert.Equal(t, swVectorSig, swSign(t, swSecret, swID, ts, body), "the test's own HMAC")
		for _, secret := range []string{swSecret, swSecretRaw} {
			h, err := webhook.SignStandard(swID, swVectorTime, body, secret)
			require.NoError(t, err)
			assert.Equal(t, swVectorSig, h.Get("webhook-signature"))
			assert.Equal(t, swID, h.Get("webhook-id"))
			assert.Equal(t, ts, h.Get("webhook-timestamp"))
		}
	})

	// Verification tests of the three libraries (the same cases in each).
	for name, tc := range map[string]struct {
		sig  string
		ts   string
		want error
	}{
		"valid signature":               {swVectorSig, ts, nil},
		"valid multi sig (v2 ignored)":  {swWrongSig + " v2," + swWrongSig[3:] + " " + swVectorSig + " " + swWrongSig, ts, nil},
		"invalid signature (go, multi)": {swWrongSig, ts, webhook.ErrNoMatchingSignature},
		// test_webhooks.py test_invalid_signature_raises_error: last byte changed.
		"invalid signature (python)": {"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=", ts, webhook.ErrNoMatchingSignature},
		// webhook.test.ts "invalid signature throws error" and "partial signature throws error".
		"invalid signature (javascript)": {"v1,dawfeoifkpqwoekfpqoekf", ts, webhook.ErrMalformedSignatureHeader},
		"partial signature":              {swVectorSig[:8], ts, webhook.ErrMalformedSignatureHeader},
		"empty v1 signature":             {"v1,", ts, webhook.ErrMalformedSignatureHeader},
		// test_invalid_timestamp_raises_error, "invalid timestamp throws error".
		"invalid timestamp": {swVectorSig, "hello", webhook.ErrMalformedSignatureHeader},
		// libraries/go "invalid timestamp fails when ignoring tolerance": the
		// timestamp is part of what is signed.
		"timestamp changed to 2000": {swVectorSig, "946684800", webhook.ErrNoMatchingSignature},
	} {
		t.Run(name, func(t *testing.T) {
			h := swHeader(swID, tc.ts, tc.sig)
			for _, secret := range []string{swSecret, swSecretRaw} {
				err := swVerifier(t, secret).Verify(body, h)
				if tc.want == nil {
					assert.NoError(t, err, secret)
					continue
				}
				assert.ErrorIs(t, err, tc.want, secret)
				swAssertClean(t, err.Error(), h)
			}
		})
	}
}

func TestStandardSignVerifyRoundTrip(t *testing.T) {
	body := []byte(`{"id":"evt_1","event":"payment.completed","data":{"amount":"100.00"}}`)
	secret, err := webhook.NewStandardSecret()
	require.NoError(t, err)
	h, err := webhook.SignStandard("evt_1", swVectorTime, body, secret)
	require.NoError(t, err)

	v := swVerifier(t, secret)
	require.NoError(t, v.Verify(body, h))
	assert.Equal(t, "evt_1", v.EventID(h))
	assert.Equal(t, swSign(t, secret, "evt_1", h.Get("webhook-timestamp"), body), h.Get("webhook-signature"))

	// Copied into a request as the documentation says.
	req, err := http.NewRequest(http.MethodPost, "http://localhost/hook", bytes.NewReader(body))
	require.NoError(t, err)
	for k := range h {
		req.Header.Set(k, h.Get(k))
	}
	assert.NoError(t, v.Verify(body, req.Header))

	empty, err := webhook.SignStandard("evt_2", swVectorTime, nil, secret)
	require.NoError(t, err)
	assert.NoError(t, v.Verify(nil, empty), "an empty body is signed and verified too")
	assert.ErrorIs(t, v.Verify([]byte(" "), empty), webhook.ErrNoMatchingSignature)
}

func TestStandardSecretRotation(t *testing.T) {
	body := []byte(swPayload)
	both, err := webhook.SignStandard(swID, swVectorTime, body, swSecret, swOtherSecret)
	require.NoError(t, err)
	assert.Len(t, strings.Fields(both.Get("webhook-signature")), 2)
	oldOnly, err := webhook.SignStandard(swID, swVectorTime, body, swSecret)
	require.NoError(t, err)
	newOnly, err := webhook.SignStandard(swID, swVectorTime, body, swOtherSecret)
	require.NoError(t, err)

	rotating := swVerifier(t, swSecret, swOtherSecret)
	for name, h := range map[string]http.Header{"both": both, "old": oldOnly, "new": newOnly} {
		assert.NoError(t, rotating.Verify(body, h), name)
	}
	rotated := swVerifier(t, swOtherSecret)
	assert.NoError(t, rotated.Verify(body, both))
	assert.NoError(t, rotated.Verify(body, newOnly))
	assert.ErrorIs(t, rotated.Verify(body, oldOnly), webhook.ErrNoMatchingSignature)
}

func TestStandardVerifierRejectsTampering(t *testing.T) {
	body := []byte(swPayload)
	v := swVerifier(t, swSecret)
	signed := swSignAt(t, swVectorTime, body, swSecret)
	require.NoError(t, v.Verify(body, signed))

	with := func(key, value string) http.Header {
		h := signed.Clone()
		h.Set(key, value)
		return h
	}
	flipped := []byte(swVectorSig)
	flipped[5] ^= 1 // still base64 of 32 bytes
	for name, tc := range map[string]struct {
		body   []byte
		header http.Header
	}{
		"body changed":              {[]byte(`{"test": 2432232315}`), signed},
		"body with a space":         {[]byte(swPayload + " "), signed},
		"body empty":                {nil, signed},
		"id changed":                {body, with("webhook-id", "msg_other")},
		"timestamp changed":         {body, with("webhook-timestamp", strconv.FormatInt(swVectorTime.Unix()-1, 10))},
		"timestamp zero-padded":     {body, with("webhook-timestamp", "0"+signed.Get("webhook-timestamp"))},
		"signature bit flipped":     {body, with("webhook-signature", string(flipped))},
		"wrong secret":              {body, swSignAt(t, swVectorTime, body, swOtherSecret)},
		"signature under v2":        {body, with("webhook-signature", "v2,"+swVectorSig[3:]+" "+swWrongSig)},
		"timestamp in milliseconds": {body, with("webhook-timestamp", signed.Get("webhook-timestamp")+"000")},
	} {
		t.Run(name, func(t *testing.T) {
			err := v.Verify(tc.body, tc.header)
			require.Error(t, err)
			assert.True(t, errors.Is(err, webhook.ErrNoMatchingSignature) || errors.Is(err, webhook.ErrMalformedSignatureHeader), err)
			swAssertClean(t, err.Error(), tc.header)
		})
	}
	assert.ErrorIs(t, v.Verify(body, swSignAt(t, swVectorTime, body, swOtherSecret)), webhook.ErrNoMatchingSignature)
}

func TestStandardTimestampTolerance(t *testing.T) {
	body := []byte(swPayload)
	v := swVerifier(t, swSecret)
	for name, tc := range map[string]struct {
		signedAt time.Time
		want     error
	}{
		"now":                     {swVectorTime, nil},
		"exactly 5 minutes old":   {swVectorTime.Add(-5 * time.Minute), nil},
		"exactly 5 minutes ahead": {swVectorTime.Add(5 * time.Minute), nil},
		"5m1s old":                {swVectorTime.Add(-5*time.Minute - time.Second), webhook.ErrTimestampOutOfTolerance},
		"5m1s ahead":              {swVectorTime.Add(5*time.Minute + time.Second), webhook.ErrTimestampOutOfTolerance},
		"a day old":               {swVectorTime.Add(-24 * time.Hour), webhook.ErrTimestampOutOfTolerance},
		"epoch":                   {time.Unix(0, 0), webhook.ErrTimestampOutOfTolerance},
	} {
		t.Run(name, func(t *testing.T) {
			h := swSignAt(t, tc.signedAt, body, swSecret)
			err := v.Verify(body, h)
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tc.want)
			swAssertClean(t, err.Error(), h)
		})
	}

	t.Run("far future does not overflow", func(t *testing.T) {
		for _, ts := range []string{"9223372036854775807", "1099511627777", "99999999999"} {
			h := swHeader(swID, ts, swSign(t, swSecret, swID, ts, body))
			err := v.Verify(body, h)
			assert.ErrorIs(t, err, webhook.ErrTimestampOutOfTolerance, ts)
			assert.NotContains(t, err.Error(), "-", "no negative duration in %q", err)
		}
	})

	t.Run("custom tolerance and clock", func(t *testing.T) {
		h := swSignAt(t, swVectorTime, body, swSecret)
		later := func() time.Time { return swVectorTime.Add(time.Minute) }
		strict, err := webhook.NewStandardVerifier([]string{swSecret},
			webhook.WithSignatureTolerance(30*time.Second), webhook.WithSignatureClock(later))
		require.NoError(t, err)
		assert.ErrorIs(t, strict.Verify(body, h), webhook.ErrTimestampOutOfTolerance)
		lenient, err := webhook.NewStandardVerifier([]string{swSecret}, webhook.WithSignatureClock(later))
		require.NoError(t, err)
		assert.NoError(t, lenient.Verify(body, h))
	})

	t.Run("wall clock by default", func(t *testing.T) {
		def, err := webhook.NewStandardVerifier([]string{swSecret})
		require.NoError(t, err)
		assert.NoError(t, def.Verify(body, swSignAt(t, time.Now(), body, swSecret)))
		assert.ErrorIs(t, def.Verify(body, swSignAt(t, swVectorTime, body, swSecret)), webhook.ErrTimestampOutOfTolerance)
	})
}

// The out-of-tolerance message must never read "signed 5m0s ago, tolerance
// 5m0s": the age is shown precisely enough to be more than the tolerance.
func TestToleranceMessageShowsAnAgeBeyondTheTolerance(t *testing.T) {
	body := []byte(swPayload)
	signedAt := swVectorTime // whole seconds, as on the wire
	for name, tc := range map[string]struct {
		now  time.Time
		want string
	}{
		"1ns late":          {signedAt.Add(5*time.Minute + time.Nanosecond), "signed 5m0.000000001s ago, more than the 5m0s tolerance"},
		"400ms late":        {signedAt.Add(5*time.Minute + 400*time.Millisecond), "signed 5m0.4s ago, more than the 5m0s tolerance"},
		"rounds to the ms":  {signedAt.Add(5*time.Minute + 1234567*time.Nanosecond), "signed 5m0.001s ago, more than the 5m0s tolerance"},
		"1s early":          {signedAt.Add(-5*time.Minute - time.Second), "signed 5m1s in the future, more than the 5m0s tolerance"},
		"early by a hair":   {signedAt.Add(-5*time.Minute - 300*time.Microsecond), "signed 5m0.0003s in the future, more than the 5m0s tolerance"},
		"a day late":        {signedAt.Add(24 * time.Hour), "signed 24h0m0s ago, more than the 5m0s tolerance"},
		"just under a ms":   {signedAt.Add(5*time.Minute + 999*time.Microsecond), "signed 5m0.001s ago, more than the 5m0s tolerance"},
		"ms rounds down":    {signedAt.Add(5*time.Minute + 1400*time.Microsecond), "signed 5m0.001s ago, more than the 5m0s tolerance"},
		"rounds to exactly": {signedAt.Add(5*time.Minute + 400*time.Microsecond), "signed 5m0.0004s ago, more than the 5m0s tolerance"},
	} {
		t.Run(name, func(t *testing.T) {
			clock := webhook.WithSignatureClock(func() time.Time { return tc.now })
			std, err := webhook.NewStandardVerifier([]string{swSecret}, clock)
			require.NoError(t, err)
			sig, err := webhook.NewSignatureVerifier([]string{"secret"}, clock)
			require.NoError(t, err)
			for verifier, verr := range map[string]error{
				"StandardVerifier":  std.Verify(body, swSignAt(t, signedAt, body, swSecret)),
				"SignatureVerifier": sig.Verify(body, http.Header{webhook.SignatureHeader: {webhook.SignPayload(body, signedAt, "secret")}}),
			} {
				require.ErrorIs(t, verr, webhook.ErrTimestampOutOfTolerance, verifier)
				assert.Equal(t, "webhook: timestamp outside the tolerance: "+tc.want, verr.Error(), verifier)
			}
		})
	}
}

func TestStandardMissingHeaders(t *testing.T) {
	body := []byte(swPayload)
	v := swVerifier(t, swSecret)
	signed := swSignAt(t, swVectorTime, body, swSecret)
	for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		t.Run(name, func(t *testing.T) {
			for how, h := range map[string]http.Header{"deleted": signed.Clone(), "empty": signed.Clone()} {
				if how == "deleted" {
					h.Del(name)
				} else {
					h.Set(name, "")
				}
				err := v.Verify(body, h)
				assert.ErrorIs(t, err, webhook.ErrMissingStandardHeader, how)
				assert.EqualError(t, err, "webhook: lacks "+name, how)
			}
		})
	}
	blank := signed.Clone()
	blank.Set("webhook-signature", "   ")
	assert.ErrorIs(t, v.Verify(body, blank), webhook.ErrMissingStandardHeader)

	err := v.Verify(body, http.Header{})
	assert.ErrorIs(t, err, webhook.ErrMissingStandardHeader)
	assert.EqualError(t, err, "webhook: lacks webhook-id, webhook-timestamp, webhook-signature")
	assert.ErrorIs(t, v.Verify(body, nil), webhook.ErrMissingStandardHeader)

	// A delivery signed with the other scheme only.
	other := http.Header{webhook.SignatureHeader: {webhook.SignPayload(body, swVectorTime, swSecret)}}
	assert.ErrorIs(t, v.Verify(body, other), webhook.ErrMissingStandardHeader)
}

func TestStandardMalformedHeaders(t *testing.T) {
	body := []byte(swPayload)
	v := swVerifier(t, swSecret)
	ts := strconv.FormatInt(swVectorTime.Unix(), 10)
	for name, tc := range map[string]struct{ ts, sig string }{
		"negative timestamp":      {"-" + ts, swVectorSig},
		"plus sign":               {"+" + ts, swVectorSig},
		"fractional timestamp":    {ts + ".5", swVectorSig},
		"timestamp with space":    {ts + " ", swVectorSig},
		"timestamp too long":      {"99999999999999999999", swVectorSig},
		"RFC 3339 timestamp":      {swVectorTime.UTC().Format(time.RFC3339), swVectorSig},
		"no comma":                {ts, "v1" + swVectorSig[3:]},
		"equals instead of comma": {ts, "v1=" + swVectorSig[3:]},
		"empty version":           {ts, "," + swVectorSig[3:]},
		"hex signature":           {ts, "v1,836b9be4c7abdf5f1ac5acb81bd6a00e8bc60c5fe1a82c24c25b26c7c83c9e55"},
		"unpadded base64":         {ts, strings.TrimSuffix(swVectorSig, "=")},
		"url-safe base64":         {ts, "v1,g0hM9SsE-OTPJTGt_tmIKtSyZlE3uFJELVlNIOLJ1OE="},
		"non-canonical base64":    {ts, strings.TrimSuffix(swVectorSig, "E=") + "F="},
		"33 bytes":                {ts, "v1," + base64.StdEncoding.EncodeToString(make([]byte, 33))},
		"only v1a (ed25519)":      {ts, "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg=="},
		"valid then malformed":    {ts, swVectorSig + " v1,%%%"},
		"comma-separated":         {ts, swVectorSig + "," + swWrongSig},
		"too many entries":        {ts, strings.Repeat("v2,x ", 40) + swVectorSig},
	} {
		t.Run(name, func(t *testing.T) {
			h := swHeader(swID, tc.ts, tc.sig)
			err := v.Verify(body, h)
			assert.ErrorIs(t, err, webhook.ErrMalformedSignatureHeader)
			if err != nil {
				assert.True(t, strings.HasPrefix(err.Error(), "webhook: malformed Standard Webhooks header: "), err)
				assert.NotContains(t, err.Error(), webhook.SignatureHeader, "names the right scheme")
				swAssertClean(t, err.Error(), h)
			}
		})
	}

	t.Run("repeated id or timestamp", func(t *testing.T) {
		h := swSignAt(t, swVectorTime, body, swSecret)
		h.Add("webhook-id", "msg_other")
		assert.ErrorIs(t, v.Verify(body, h), webhook.ErrMalformedSignatureHeader)
		assert.Empty(t, v.EventID(h), "no id when it is ambiguous")

		h = swSignAt(t, swVectorTime, body, swSecret)
		h.Add("webhook-timestamp", "1")
		assert.ErrorIs(t, v.Verify(body, h), webhook.ErrMalformedSignatureHeader)
	})
}

func TestStandardAcceptsWellFormedVariants(t *testing.T) {
	body := []byte(swPayload)
	v := swVerifier(t, swSecret)
	ts := strconv.FormatInt(swVectorTime.Unix(), 10)
	for name, h := range map[string]http.Header{
		"lower-case keys of a hand-built map": {"webhook-id": {swID}, "webhook-timestamp": {ts}, "webhook-signature": {swVectorSig}},
		"upper-case keys":                     {"WEBHOOK-ID": {swID}, "WEBHOOK-TIMESTAMP": {ts}, "WEBHOOK-SIGNATURE": {swVectorSig}},
		"signatures over two lines":           {"Webhook-Id": {swID}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {swWrongSig, swVectorSig}},
		"the same id twice":                   {"Webhook-Id": {swID, swID}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {swVectorSig}},
		"extra spaces between entries":        swHeader(swID, ts, "  "+swWrongSig+"   "+swVectorSig+"  "),
		"v1a entry beside v1":                 swHeader(swID, ts, "v1a,AAAA "+swVectorSig),
		"unknown version without content":     swHeader(swID, ts, "v9, "+swVectorSig),
	} {
		t.Run(name, func(t *testing.T) {
			assert.NoError(t, v.Verify(body, h))
			assert.Equal(t, swID, v.EventID(h))
		})
	}
}

func TestStandardEventID(t *testing.T) {
	var v webhook.EventIDVerifier = swVerifier(t, swSecret)
	h := swSignAt(t, swVectorTime, []byte(swPayload), swSecret)
	assert.Equal(t, swID, v.EventID(h))
	assert.Equal(t, swID, v.EventID(http.Header{"webhook-id": {swID}}))
	assert.Empty(t, v.EventID(http.Header{}))
	assert.Empty(t, v.EventID(nil))
	assert.Empty(t, v.EventID(http.Header{"Webhook-Id": {""}}))
	assert.Empty(t, v.EventID(http.Header{"Webhook-Id": {"  "}}))
	assert.Empty(t, v.EventID(http.Header{"Webhook-Id": {"a", "b"}}))
}

func TestNewStandardVerifierRejectsBadConfig(t *testing.T) {
	for name, secrets := range map[string][]string{
		"no secrets":                     nil,
		"empty list":                     {},
		"empty secret":                   {swSecret, ""},
		"prefix only":                    {"whsec_"},
		"not base64":                     {"whsec_" + swSecretRaw + "!!"},
		"unpadded":                       {"whsec_" + strings.TrimSuffix(strings.TrimPrefix(swOtherSecret, "whsec_"), "=")},
		"url-safe alphabet":              {"whsec_ab-_" + swSecretRaw[4:]},
		"the secret of the other scheme": {"whsec_test_K3y9Pq2Lm8Vn4Rt7"},
		"ed25519 secret key":             {"whsk_" + swSecretRaw},
		"ed25519 public key":             {"whpk_" + swSecretRaw},
		"space around":                   {" " + swSecret},
		"prefix twice":                   {"whsec_" + swSecret},
		"a key of 3 bytes":               {"whsec_bm9w"},
		"a key of 23 bytes":              {"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 23))},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := webhook.NewStandardVerifier(secrets, webhook.WithSignatureClock(swNow))
			assert.Nil(t, v)
			require.ErrorIs(t, err, payments.ErrInvalidConfig)
			for _, s := range secrets {
				if len(s) > 6 {
					assert.NotContains(t, err.Error(), strings.TrimPrefix(s, "whsec_"))
				}
			}
			swAssertClean(t, err.Error(), nil)
			_, err = webhook.SignStandard(swID, swVectorTime, nil, secrets...)
			assert.ErrorIs(t, err, payments.ErrInvalidConfig, "SignStandard refuses it too")
		})
	}
	for name, opt := range map[string]webhook.VerifierOption{
		"zero tolerance":     webhook.WithSignatureTolerance(0),
		"negative tolerance": webhook.WithSignatureTolerance(-time.Second),
	} {
		v, err := webhook.NewStandardVerifier([]string{swSecret}, opt)
		assert.Nil(t, v, name)
		assert.ErrorIs(t, err, payments.ErrInvalidConfig, name)
	}
}

func TestSignStandardRejectsBadInput(t *testing.T) {
	for name, call := range map[string]func() (http.Header, error){
		"empty id":    func() (http.Header, error) { return webhook.SignStandard("", swVectorTime, nil, swSecret) },
		"before 1970": func() (http.Header, error) { return webhook.SignStandard(swID, time.Unix(-1, 0), nil, swSecret) },
		"no secret":   func() (http.Header, error) { return webhook.SignStandard(swID, swVectorTime, nil) },
		"bad second one": func() (http.Header, error) {
			return webhook.SignStandard(swID, swVectorTime, nil, swSecret, "whsec_%")
		},
	} {
		h, err := call()
		assert.Nil(t, h, name)
		assert.ErrorIs(t, err, payments.ErrInvalidConfig, name)
	}
}

func TestNewStandardSecret(t *testing.T) {
	a, err := webhook.NewStandardSecret()
	require.NoError(t, err)
	b, err := webhook.NewStandardSecret()
	require.NoError(t, err)
	assert.NotEqual(t, a, b)
	require.True(t, strings.HasPrefix(a, "whsec_"), a)
	key, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(a, "whsec_"))
	require.NoError(t, err)
	assert.Len(t, key, 32)
	// The spec's reference libraries take it as is.
	body := []byte(swPayload)
	h, err := webhook.SignStandard(swID, swVectorTime, body, a)
	require.NoError(t, err)
	assert.Equal(t, swSign(t, a, swID, h.Get("webhook-timestamp"), body), h.Get("webhook-signature"))
	assert.NoError(t, swVerifier(t, a).Verify(body, h))
	assert.ErrorIs(t, swVerifier(t, b).Verify(body, h), webhook.ErrNoMatchingSignature)
}

func TestStandardVerifierNeverPrintsSecrets(t *testing.T) {
	v := swVerifier(t, swSecret, swOtherSecret)
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("verifier", "v", v, "value", *v)
	printed := []string{fmt.Sprint(v), fmt.Sprintf("%+v", v), fmt.Sprintf("%#v", v), fmt.Sprintf("%v", *v),
		fmt.Sprintf("%+v", *v), fmt.Sprintf("%#v", *v), v.LogValue().String(), logged.String()}
	for _, s := range printed {
		swAssertClean(t, s, nil)
		assert.NotContains(t, s, "whsec")
		assert.Contains(t, s, "2", "says how many secrets: %s", s)
	}
	assert.Equal(t, "webhook.StandardVerifier{secrets: 2, tolerance: 5m0s}", v.String())
	// The key bytes, in any common encoding, are not there either.
	key, err := base64.StdEncoding.DecodeString(swSecretRaw)
	require.NoError(t, err)
	for _, s := range printed {
		assert.NotContains(t, s, string(key))
		assert.NotContains(t, s, fmt.Sprintf("%x", key))
		assert.NotContains(t, s, fmt.Sprint(key))
	}
}

func TestZeroStandardVerifierRefusesEverything(t *testing.T) {
	var v webhook.StandardVerifier
	body := []byte(swPayload)
	assert.ErrorIs(t, v.Verify(body, swSignAt(t, swVectorTime, body, swSecret)), webhook.ErrNoMatchingSignature)
	assert.ErrorIs(t, v.Verify(body, http.Header{}), webhook.ErrMissingStandardHeader)
	assert.Equal(t, "webhook.StandardVerifier{secrets: 0, tolerance: 0s}", v.String())
}

// FuzzStandardSignatureHeader feeds arbitrary Standard Webhooks headers and
// bodies to a verifier: it must never panic, every error must match one of
// the documented sentinels and repeat no secret, and Verify may return nil
// only if the header holds the right signature, computed here independently,
// of the id, timestamp and body, with a timestamp within the tolerance.
func FuzzStandardSignatureHeader(f *testing.F) {
	ts := strconv.FormatInt(swVectorTime.Unix(), 10)
	other := swSign(f, swOtherSecret, swID, ts, []byte(swPayload))
	for _, seed := range []struct{ id, ts, sig, body string }{
		{swID, ts, swVectorSig, swPayload},
		{swID, ts, swWrongSig + " v2," + swWrongSig[3:] + " " + swVectorSig, swPayload},
		{swID, ts, swWrongSig + " " + other, swPayload},
		{swID, ts, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=", swPayload},
		{swID, ts, "v1,dawfeoifkpqwoekfpqoekf", swPayload},
		{swID, ts, "v1,", swPayload},
		{swID, "hello", swVectorSig, swPayload},
		{swID, "946684800", swVectorSig, swPayload},
		{swID, "9223372036854775807", swVectorSig, swPayload},
		{swID, ts, "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==", swPayload},
		{swID, ts, swVectorSig + "," + swWrongSig, swPayload},
		{"", "", "", ""},
		{"msg.1", ts, ",,, v1 ,v1,,", "\x00\xff"},
		{swID, ts, strings.Repeat("v1,"+swVectorSig[3:]+" ", 40), swPayload},
		{swID, "0" + ts, swVectorSig, swPayload},
	} {
		f.Add(seed.id, seed.ts, seed.sig, []byte(seed.body))
	}
	sentinels := []error{webhook.ErrMissingStandardHeader, webhook.ErrMalformedSignatureHeader,
		webhook.ErrNoMatchingSignature, webhook.ErrTimestampOutOfTolerance}
	v := swVerifier(f, swSecret, swOtherSecret)

	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {sig}}
		err := v.Verify(body, h)
		if err != nil {
			known := false
			for _, s := range sentinels {
				known = known || errors.Is(err, s)
			}
			if !known {
				t.Fatalf("Verify returned an error matching no sentinel: %v", err)
			}
			for _, s := range []string{swSecret, swSecretRaw, swOtherSecret, strings.TrimPrefix(swOtherSecret, "whsec_"),
				swSign(t, swSecret, id, ts, body)[3:], swSign(t, swOtherSecret, id, ts, body)[3:]} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("error %q repeats a secret or a signature", err)
				}
			}
			return
		}
		unix, perr := strconv.ParseInt(ts, 10, 64)
		if perr != nil || strings.TrimLeft(ts, "0123456789") != "" {
			t.Fatalf("verified a delivery whose timestamp %q is not plain digits", ts)
		}
		if d := swVectorTime.Sub(time.Unix(unix, 0)); d > 5*time.Minute || d < -5*time.Minute {
			t.Fatalf("verified a delivery signed %s from now", d)
		}
		if v.EventID(h) != id {
			t.Fatalf("EventID %q is not the verified id %q", v.EventID(h), id)
		}
		entries := strings.Fields(sig)
		for _, secret := range []string{swSecret, swOtherSecret} {
			want := swSign(t, secret, id, ts, body)
			for _, e := range entries {
				if e == want {
					return
				}
			}
		}
		t.Fatalf("verified a header without the right signature: id %q ts %q sig %q", id, ts, sig)
	})
}
