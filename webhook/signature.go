package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paymentsapi/payments-go"
)

// DefaultSignatureTolerance is how far a delivery's signing time may be from
// the receiver's clock, in the past or in the future, before the delivery is
// refused as a possible replay.
const DefaultSignatureTolerance = 5 * time.Minute

// SignatureHeader is the header that carries a webhook delivery's signature.
const SignatureHeader = "Payments-Signature"

// Errors of signature verification. Match them with errors.Is; their messages
// say what is wrong without ever repeating a secret or a signature.
var (
	// ErrNoSignatureHeader means the delivery has no Payments-Signature
	// header (or an empty one).
	ErrNoSignatureHeader = errors.New("webhook: has no " + SignatureHeader + " header")
	// ErrMalformedSignatureHeader means the header is not
	// "t=<unix seconds>,v1=<hex>[,v1=<hex>...]" (for a StandardVerifier:
	// a webhook-* header is not as that scheme defines it).
	ErrMalformedSignatureHeader = errors.New("webhook: malformed " + SignatureHeader + " header")
	// ErrNoMatchingSignature means no v1 signature of the header matches the
	// payload under any of the secrets: the body (or, for a
	// StandardVerifier, the event id or timestamp) was altered, or it was
	// signed with another secret.
	ErrNoMatchingSignature = errors.New("webhook: no signature matches the payload under the verifier's secrets: " +
		"check that the verifier has this endpoint's signing secret (the old and the new one while a secret rotates) " +
		"and that the body reaches it byte for byte (no proxy or middleware re-encoding it)")
	// ErrTimestampOutOfTolerance means the signature is valid but its
	// timestamp is further from now than the tolerance, in the past (an old
	// delivery replayed) or in the future. Check the receiver's clock if it
	// happens to every delivery.
	ErrTimestampOutOfTolerance = errors.New("webhook: timestamp outside the tolerance")
)

// Verifier checks that a webhook delivery comes from the service. Verify gets
// the raw body, byte for byte as received, and the request headers, and
// returns nil only for an authentic delivery.
//
// SignatureVerifier implements the scheme the SDK assumes, and
// StandardVerifier the Standard Webhooks scheme. If your account signs
// deliveries differently, implement Verifier and pass it to
// NewHandler. The handler logs Verify's error, so it must not contain
// secrets or signatures.
type Verifier interface {
	Verify(payload []byte, header http.Header) error
}

// verifierConfig is what VerifierOptions set; every verifier holds one, so
// that the same options configure each scheme.
type verifierConfig struct {
	tolerance time.Duration
	now       func() time.Time // time.Now; the package's tests set another
}

func defaultVerifierConfig() verifierConfig {
	return verifierConfig{tolerance: DefaultSignatureTolerance, now: time.Now}
}

// VerifierOption configures a SignatureVerifier or a StandardVerifier; the
// one there is is WithSignatureTolerance.
type VerifierOption struct {
	apply func(*verifierConfig) error
}

// WithSignatureTolerance sets how far the signing time may be from now, in
// either direction (default DefaultSignatureTolerance). It must be positive.
// A Handler whose store is a MemoryClaimStore makes the store remember
// processed ids for twice the tolerance when that is longer than
// DefaultReplayWindow.
func WithSignatureTolerance(d time.Duration) VerifierOption {
	return VerifierOption{func(v *verifierConfig) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithSignatureTolerance(%s) must be positive", payments.ErrInvalidConfig, d)
		}
		v.tolerance = d
		return nil
	}}
}

// SignatureVerifier verifies the Payments-Signature header:
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>", with one v1
// entry per secret while a secret rotates. A delivery is authentic when any
// v1 entry matches the body under any of the verifier's secrets and t is
// within the tolerance of now. Entries of other schemes (v0=, ...) are
// ignored. Make it with NewSignatureVerifier (the zero value has no secret
// and refuses every delivery); it is safe for concurrent use, and its printed
// forms never show the secrets.
type SignatureVerifier struct {
	secrets []string
	cfg     verifierConfig
}

// NewSignatureVerifier returns a verifier that accepts deliveries signed
// with any of secrets (the endpoint's signing secret; give the old and the
// new one while you rotate). It fails, with an error matching
// ErrInvalidConfig, when secrets is empty, a secret is empty or an option is
// invalid.
func NewSignatureVerifier(secrets []string, opts ...VerifierOption) (*SignatureVerifier, error) {
	cfg, kept, err := newVerifier("NewSignatureVerifier", secrets, opts, func(s string) (string, error) {
		if s == "" {
			return "", errors.New("is empty")
		}
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	return &SignatureVerifier{cfg: cfg, secrets: kept}, nil
}

// newVerifier checks secrets with check (which turns each into what the
// verifier keeps, or says what is wrong without repeating it) and applies
// opts: what NewSignatureVerifier and NewStandardVerifier share.
func newVerifier[K any](name string, secrets []string, opts []VerifierOption, check func(string) (K, error)) (verifierConfig, []K, error) {
	cfg := defaultVerifierConfig()
	if len(secrets) == 0 {
		return cfg, nil, fmt.Errorf("%w: %s needs at least one secret: give this endpoint's signing secret, as the service's dashboard shows it", payments.ErrInvalidConfig, name)
	}
	kept := make([]K, 0, len(secrets))
	for i, s := range secrets {
		k, err := check(s)
		if err != nil {
			return cfg, nil, fmt.Errorf("%w: %s: secret %d %s: give this endpoint's signing secret, as the service's dashboard shows it (an unset environment variable gives an empty one)", payments.ErrInvalidConfig, name, i, err)
		}
		kept = append(kept, k)
	}
	for _, o := range opts {
		if o.apply == nil {
			continue // the zero VerifierOption changes nothing
		}
		if err := o.apply(&cfg); err != nil {
			return cfg, nil, err
		}
	}
	return cfg, kept, nil
}

// Verify returns nil when header carries a valid signature of payload. Its
// errors match ErrNoSignatureHeader, ErrMalformedSignatureHeader,
// ErrNoMatchingSignature or ErrTimestampOutOfTolerance. The timestamp is
// checked after the signature, so ErrTimestampOutOfTolerance always means an
// authentic but stale (or early) delivery.
func (v *SignatureVerifier) Verify(payload []byte, header http.Header) error {
	value := signatureHeaderValue(header)
	if strings.TrimSpace(value) == "" {
		if header.Get(StandardSignatureHeader) != "" {
			return errOtherSchemeStandard
		}
		return ErrNoSignatureHeader
	}
	sh, err := parseSignatureHeader(value)
	if err != nil {
		return err
	}
	if !anyMatch(v.secrets, func(secret string) []byte { return computeSignature(payload, sh.t, secret) }, sh.v1) {
		return ErrNoMatchingSignature
	}
	return v.cfg.checkTimestamp(sh.unix)
}

// The hints of a delivery signed with the other scheme than the verifier's:
// the commonest mistake of a new receiver, so the error says how to switch.
// They still match the scheme's "no header" error.
var (
	errOtherSchemeStandard = &verifyError{"webhook: no " + SignatureHeader + " header, but Standard Webhooks headers (" + StandardSignatureHeader +
		"): this receiver expects the Payments-Signature scheme; use a StandardVerifier (the example receiver: PAYMENTS_WEBHOOK_SCHEME=standard)", ErrNoSignatureHeader}
	errOtherSchemePayments = &verifyError{"webhook: no Standard Webhooks headers, but a " + SignatureHeader +
		" header: this receiver expects Standard Webhooks; use a SignatureVerifier (the example receiver: PAYMENTS_WEBHOOK_SCHEME=payments, the default)", ErrMissingStandardHeader}
)

// checkTimestamp returns nil when the signing time unix (seconds) is within
// the tolerance of now, either way.
func (c verifierConfig) checkTimestamp(unix int64) error {
	if unix > maxSignatureUnix {
		return fmt.Errorf("%w: signed in the far future, beyond the %s tolerance", ErrTimestampOutOfTolerance, c.tolerance)
	}
	now, signed := c.now(), time.Unix(unix, 0)
	// Each difference is taken in its own direction: Sub saturates, and
	// negating the most negative Duration would overflow.
	if age := now.Sub(signed); age > c.tolerance {
		return fmt.Errorf("%w: signed %s ago, more than the %s tolerance", ErrTimestampOutOfTolerance, beyondTolerance(age, c.tolerance), c.tolerance)
	}
	if ahead := signed.Sub(now); ahead > c.tolerance {
		return fmt.Errorf("%w: signed %s in the future, more than the %s tolerance", ErrTimestampOutOfTolerance, beyondTolerance(ahead, c.tolerance), c.tolerance)
	}
	return nil
}

// beyondTolerance formats d, which is more than tolerance, to the
// millisecond, unless rounding would make it look no more than tolerance:
// then exactly.
func beyondTolerance(d, tolerance time.Duration) time.Duration {
	if r := d.Round(time.Millisecond); r > tolerance {
		return r
	}
	return d
}

// anyMatch reports whether any signature in got equals sign(secret) for any
// of the secrets. It compares every pair with hmac.Equal and never stops
// early, so the time taken does not depend on which one matched.
func anyMatch[S any](secrets []S, sign func(S) []byte, got [][]byte) bool {
	ok := false
	for _, secret := range secrets {
		want := sign(secret)
		for _, g := range got {
			if hmac.Equal(want, g) {
				ok = true
			}
		}
	}
	return ok
}

// describe is the printed form of a verifier: its kind, how many secrets it
// holds and its tolerance, never the secrets.
// replayTolerance is the verifier's tolerance, for NewHandler to size a
// MemoryClaimStore's replay window.
func (v *SignatureVerifier) replayTolerance() time.Duration { return v.cfg.tolerance }

func (c verifierConfig) describe(kind string, secrets int) string {
	return fmt.Sprintf("webhook.%s{secrets: %d, tolerance: %s}", kind, secrets, c.tolerance)
}

func (c verifierConfig) logValue(secrets int) slog.Value {
	return slog.GroupValue(slog.Int("secrets", secrets), slog.String("tolerance", c.tolerance.String()))
}

// String describes the verifier without its secrets.
func (v SignatureVerifier) String() string {
	return v.cfg.describe("SignatureVerifier", len(v.secrets))
}

// GoString describes the verifier without its secrets.
func (v SignatureVerifier) GoString() string { return v.String() }

// Format describes the verifier without its secrets, with any verb: fmt
// consults String and GoString for %v, %s and %#v only, and would print the
// secrets for %d, %x or %q.
func (v SignatureVerifier) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, v.String()) }

// LogValue logs the verifier without its secrets.
func (v SignatureVerifier) LogValue() slog.Value { return v.cfg.logValue(len(v.secrets)) }

// ConstructEvent verifies a delivery with the default scheme and the given
// secrets (see SignatureVerifier, with the default tolerance), then parses
// it. payload must be the raw body, unchanged: read it whole and pass it here
// before decoding it in any way. Errors match the signature errors
// (ErrNoSignatureHeader, ...), ErrInvalidEvent, or ErrInvalidConfig when no
// secret is given.
func ConstructEvent(payload []byte, header http.Header, secrets ...string) (*payments.Event, error) {
	v, err := NewSignatureVerifier(secrets)
	if err != nil {
		return nil, err
	}
	if err := v.Verify(payload, header); err != nil {
		return nil, err
	}
	return payments.ParseEvent(payload)
}

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

// signatureHeaderValue returns the Payments-Signature header. Several header
// lines are joined with commas, as HTTP allows; a map built by hand with a
// key in another case is searched too.
func signatureHeaderValue(h http.Header) string {
	values := h.Values(SignatureHeader)
	if len(values) == 0 {
		for k, vs := range h {
			if strings.EqualFold(k, SignatureHeader) {
				values = append(values, vs...)
			}
		}
	}
	return strings.Join(values, ",")
}

// signatureHeader is a parsed Payments-Signature header.
type signatureHeader struct {
	t    string // the timestamp exactly as sent: it is part of the signed text
	unix int64
	v1   [][]byte
}

// maxSignatureUnix is a signing time (in the year 36812) beyond which a
// timestamp is out of tolerance without further arithmetic, which keeps
// time.Unix far from overflowing.
const maxSignatureUnix = 1 << 40

// maxSignatureEntries bounds the work one header can ask for.
const maxSignatureEntries = 32

// parseSignatureHeader parses "t=<digits>,v1=<hex>[,...]" strictly: t must be
// a plain non-negative decimal integer and appear once; every v1 must be the
// hex of a SHA-256 HMAC; at least one v1 is required; other keys are ignored.
// Spaces around an entry are allowed, nowhere else.
func parseSignatureHeader(value string) (*signatureHeader, error) {
	malformed := func(reason string) error {
		return fmt.Errorf("%w: %s", ErrMalformedSignatureHeader, reason)
	}
	items := strings.Split(value, ",")
	if len(items) > maxSignatureEntries {
		return nil, malformed("too many entries")
	}
	sh := new(signatureHeader)
	seenT := false
	for _, item := range items {
		item = strings.Trim(item, " \t")
		key, val, ok := strings.Cut(item, "=")
		switch {
		case !ok || key == "":
			return nil, malformed("an entry is not key=value")
		case key == "t":
			if seenT {
				return nil, malformed("t appears more than once")
			}
			seenT = true
			n, err := parseUnixSeconds(val)
			if err != nil {
				return nil, malformed("t is not a non-negative decimal integer")
			}
			sh.t, sh.unix = val, n
		case key == "v1":
			sig, err := hex.DecodeString(val)
			if err != nil || len(sig) != 32 {
				return nil, malformed("a v1 signature is not 64 hex digits")
			}
			sh.v1 = append(sh.v1, sig)
		}
	}
	switch {
	case !seenT:
		return nil, malformed("no t timestamp")
	case len(sh.v1) == 0:
		return nil, malformed("no v1 signature")
	}
	return sh, nil
}

// parseUnixSeconds accepts only ASCII digits (no sign, space or underscore)
// that fit in an int64.
func parseUnixSeconds(s string) (int64, error) {
	if s == "" || len(s) > 19 {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseInt(s, 10, 64)
}
