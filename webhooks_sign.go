package payments

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader is the header that carries a webhook delivery's signature.
const SignatureHeader = "Payments-Signature"

// SignPayload returns the value of the Payments-Signature header for payload
// signed at time t with each of secrets: "t=<unix seconds>,v1=<hex>[,v1=...]",
// where each v1 is HMAC-SHA256(secret, "<t>.<payload>"). Use it to build
// signed deliveries in tests; the fake service in paymentstest signs with it.
func SignPayload(payload []byte, t time.Time, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, s := range secrets {
		b.WriteString(",v1=" + hex.EncodeToString(computeSignature(payload, ts, s)))
	}
	return b.String()
}

// computeSignature is HMAC-SHA256(secret, "<ts>.<payload>").
func computeSignature(payload []byte, ts, secret string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(payload)
	return m.Sum(nil)
}
