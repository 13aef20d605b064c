package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
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

// The headers of the Standard Webhooks scheme (standardwebhooks.com). Header
// names are case-insensitive: http.Header's Get and Set find these too.
const (
	// StandardIDHeader carries the event's id, the same on every retry of
	// the event: it is the key that drops duplicate deliveries.
	StandardIDHeader = "webhook-id"
	// StandardTimestampHeader carries the signing time in unix seconds.
	StandardTimestampHeader = "webhook-timestamp"
	// StandardSignatureHeader carries the signatures: space-separated
	// "v1,<base64 HMAC-SHA256>" entries, one per secret while a secret
	// rotates.
	StandardSignatureHeader = "webhook-signature"
)

// ErrMissingStandardHeader means the delivery lacks one of the three
// Standard Webhooks headers (or has it blank); the message names which.
var ErrMissingStandardHeader = errors.New("webhook: lacks a Standard Webhooks header")

// standardSecretPrefix marks a Standard Webhooks HMAC secret.
const standardSecretPrefix = "whsec_"

// EventIDVerifier is a Verifier whose scheme signs the event's id into the
// delivery's headers, as Standard Webhooks does with webhook-id. EventID
// returns that id, or "" when the headers carry none (or several that
// differ); trust it only after Verify has returned nil for the same headers.
//
// A webhook handler whose Verifier is an EventIDVerifier dedupes deliveries
// by EventID rather than by an id read from the body: the sender promises
// that id stays the same on every retry of the event.
type EventIDVerifier interface {
	Verifier
	EventID(header http.Header) string
}

// StandardVerifier verifies deliveries signed with the Standard Webhooks
// scheme: headers webhook-id, webhook-timestamp (unix seconds) and
// webhook-signature, a space-separated list of
// "v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>" entries. A
// delivery is authentic when any v1 entry matches under any of the
// verifier's secrets and the timestamp is within the tolerance of now, in
// either direction. Entries of other versions (v1a, the ed25519 scheme) are
// ignored.
//
// Make it with NewStandardVerifier (the zero value has no secret and refuses
// every delivery). It is safe for concurrent use, and its printed forms
// never show the secrets. It implements EventIDVerifier.
type StandardVerifier struct {
	keys [][]byte
	cfg  verifierConfig
}

// replayTolerance is the verifier's tolerance, for NewHandler to size a
// MemoryClaimStore's replay window.
func (v *StandardVerifier) replayTolerance() time.Duration { return v.cfg.tolerance }

// NewStandardVerifier returns a verifier that accepts deliveries signed with
// any of secrets (give the old and the new one while you rotate). A secret is
// "whsec_" followed by the standard, padded base64 of the key bytes, as the
// sender shows it; the base64 alone is accepted too. The option
// (WithSignatureTolerance) is that of NewSignatureVerifier. It fails, with an error matching ErrInvalidConfig
// that never repeats a secret, when secrets is empty, a secret is not valid
// or an option is invalid.
func NewStandardVerifier(secrets []string, opts ...VerifierOption) (*StandardVerifier, error) {
	cfg, keys, err := newVerifier("NewStandardVerifier", secrets, opts, decodeStandardSecret)
	if err != nil {
		return nil, err
	}
	return &StandardVerifier{cfg: cfg, keys: keys}, nil
}

// Verify returns nil when header carries a valid Standard Webhooks signature
// of payload, the raw body as received. Its errors match
// ErrMissingStandardHeader, ErrMalformedSignatureHeader,
// ErrNoMatchingSignature or ErrTimestampOutOfTolerance, and never repeat a
// secret or a signature. The timestamp is checked after the signature, so
// ErrTimestampOutOfTolerance always means an authentic but stale (or early)
// delivery.
func (v *StandardVerifier) Verify(payload []byte, header http.Header) error {
	id, idErr := singleHeaderValue(header, StandardIDHeader)
	ts, tsErr := singleHeaderValue(header, StandardTimestampHeader)
	sigValues := headerValues(header, StandardSignatureHeader)
	var missing []string
	if errors.Is(idErr, ErrMissingStandardHeader) {
		missing = append(missing, StandardIDHeader)
	}
	if errors.Is(tsErr, ErrMissingStandardHeader) {
		missing = append(missing, StandardTimestampHeader)
	}
	if strings.TrimSpace(strings.Join(sigValues, "")) == "" {
		missing = append(missing, StandardSignatureHeader)
	}
	switch {
	case len(missing) == 3 && header.Get(SignatureHeader) != "":
		return errOtherSchemePayments
	case len(missing) > 0:
		return &verifyError{"webhook: lacks " + strings.Join(missing, ", "), ErrMissingStandardHeader}
	case idErr != nil:
		return idErr
	case tsErr != nil:
		return tsErr
	}
	unix, err := parseUnixSeconds(ts)
	if err != nil {
		return malformedStandard(StandardTimestampHeader + " is not a non-negative whole number of seconds")
	}
	sigs, err := parseStandardSignatures(sigValues)
	if err != nil {
		return err
	}
	if !anyMatch(v.keys, func(key []byte) []byte { return standardSignature(key, id, ts, payload) }, sigs) {
		return ErrNoMatchingSignature
	}
	return v.cfg.checkTimestamp(unix)
}

// EventID returns the webhook-id header: the event's id, the same on every
// retry. It returns "" when the header is absent, empty, or given several
// times with different values (Verify refuses such deliveries).
func (v *StandardVerifier) EventID(header http.Header) string {
	id, err := singleHeaderValue(header, StandardIDHeader)
	if err != nil {
		return ""
	}
	return id
}

// String describes the verifier without its secrets.
func (v StandardVerifier) String() string { return v.cfg.describe("StandardVerifier", len(v.keys)) }

// GoString describes the verifier without its secrets.
func (v StandardVerifier) GoString() string { return v.String() }

// Format describes the verifier without its secrets, with any verb (see
// SignatureVerifier.Format).
func (v StandardVerifier) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, v.String()) }

// LogValue logs the verifier without its secrets.
func (v StandardVerifier) LogValue() slog.Value { return v.cfg.logValue(len(v.keys)) }

// SignStandard signs payload as a Standard Webhooks sender would, for event
// id at time t, with each of secrets (whsec_ secrets, as NewStandardVerifier
// takes them), and returns the three headers to send with it: webhook-id,
// webhook-timestamp and webhook-signature (one v1 entry per secret). Use it
// to build signed deliveries in tests and fakes; copy the headers into a
// request with Header.Set. It fails, with an error matching
// ErrInvalidConfig, when id is empty, t is before 1970, no secret is given
// or a secret is not valid.
func SignStandard(id string, t time.Time, payload []byte, secrets ...string) (http.Header, error) {
	switch {
	case id == "":
		return nil, fmt.Errorf("%w: SignStandard needs an event id", payments.ErrInvalidConfig)
	case t.Unix() < 0:
		return nil, fmt.Errorf("%w: SignStandard: time %s is before 1970", payments.ErrInvalidConfig, t.UTC().Format(time.RFC3339))
	case len(secrets) == 0:
		return nil, fmt.Errorf("%w: SignStandard needs at least one secret", payments.ErrInvalidConfig)
	}
	ts := strconv.FormatInt(t.Unix(), 10)
	entries := make([]string, len(secrets))
	for i, s := range secrets {
		key, err := decodeStandardSecret(s)
		if err != nil {
			return nil, fmt.Errorf("%w: SignStandard: secret %d %s", payments.ErrInvalidConfig, i, err)
		}
		entries[i] = "v1," + base64.StdEncoding.EncodeToString(standardSignature(key, id, ts, payload))
	}
	h := http.Header{}
	h.Set(StandardIDHeader, id)
	h.Set(StandardTimestampHeader, ts)
	h.Set(StandardSignatureHeader, strings.Join(entries, " "))
	return h, nil
}

// NewStandardSecret returns a fresh secret for the Standard Webhooks scheme:
// "whsec_" and the base64 of 32 bytes from crypto/rand. Use it to configure
// a sender you control, such as a test fake.
func NewStandardSecret() (string, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook: NewStandardSecret: %w", err)
	}
	return standardSecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// standardSignature is HMAC-SHA256(key, "<id>.<ts>.<payload>").
func standardSignature(key []byte, id, ts string, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(payload)
	return m.Sum(nil)
}

// decodeStandardSecret returns the key bytes of a whsec_ secret. Its error
// completes "secret <i> ..." and never contains the secret.
func decodeStandardSecret(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("is empty")
	}
	if strings.HasPrefix(s, "whsk_") || strings.HasPrefix(s, "whpk_") {
		return nil, errors.New("is an ed25519 (v1a) key: only whsec_ HMAC secrets are supported")
	}
	encoded := strings.TrimPrefix(s, standardSecretPrefix)
	key, err := base64.StdEncoding.DecodeString(encoded)
	switch {
	case isLowerHex(encoded):
		// Valid base64 too, but a key the sender never uses: the hex secret
		// of the Payments-Signature scheme, given to the wrong verifier. A
		// real base64 key of 24 bytes or more is all hex digits with a
		// chance below 1 in 10^19.
		return nil, errors.New("is hex, the form of a Payments-Signature secret: a Standard Webhooks secret is whsec_ followed by base64 (use a SignatureVerifier for this one)")
	case err != nil:
		return nil, errors.New("is not whsec_ followed by standard (padded) base64")
	case len(key) < minStandardKeyBytes:
		// The specification asks for keys of 24 to 64 bytes: a shorter one
		// is a typo or a placeholder, and guessable.
		return nil, fmt.Errorf("has %d key bytes; Standard Webhooks keys have at least %d", len(key), minStandardKeyBytes)
	}
	return key, nil
}

// isLowerHex reports whether s is non-empty and all lower-case hex digits.
func isLowerHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// minStandardKeyBytes is the shortest key the specification allows.
const minStandardKeyBytes = 24

// parseStandardSignatures returns the v1 signatures of the webhook-signature
// header lines. Every v1 entry must be the padded base64 of 32 bytes, and at
// least one is required; entries of other versions are skipped.
func parseStandardSignatures(values []string) ([][]byte, error) {
	var sigs [][]byte
	n := 0
	for _, value := range values {
		for _, entry := range strings.Fields(value) {
			if n++; n > maxSignatureEntries {
				return nil, malformedStandard(StandardSignatureHeader + " has too many entries")
			}
			version, sig, ok := strings.Cut(entry, ",")
			if !ok || version == "" {
				return nil, malformedStandard("an entry of " + StandardSignatureHeader + " is not <version>,<signature>")
			}
			if version != "v1" {
				continue
			}
			b, err := base64.StdEncoding.Strict().DecodeString(sig)
			if err != nil || len(b) != sha256.Size {
				return nil, malformedStandard("a v1 entry of " + StandardSignatureHeader + " is not the base64 of a 32-byte HMAC")
			}
			sigs = append(sigs, b)
		}
	}
	if len(sigs) == 0 {
		return nil, malformedStandard(StandardSignatureHeader + " has no v1 (HMAC-SHA256) entry")
	}
	return sigs, nil
}

// singleHeaderValue returns the one value of header name. Repeated lines
// must agree; no value, or only blank ones, matches ErrMissingStandardHeader.
func singleHeaderValue(h http.Header, name string) (string, error) {
	values := headerValues(h, name)
	if strings.TrimSpace(strings.Join(values, "")) == "" {
		return "", ErrMissingStandardHeader
	}
	for _, v := range values[1:] {
		if v != values[0] {
			return "", malformedStandard(name + " is given several times with different values")
		}
	}
	return values[0], nil
}

// headerValues returns the lines of header name; a map built by hand with
// a key in another case is searched too.
func headerValues(h http.Header, name string) []string {
	if values := h.Values(name); len(values) > 0 {
		return values
	}
	var values []string
	for k, vs := range h {
		if strings.EqualFold(k, name) {
			values = append(values, vs...)
		}
	}
	return values
}

// verifyError is an error with its own message that matches a sentinel.
type verifyError struct {
	msg  string
	kind error
}

func (e *verifyError) Error() string { return e.msg }
func (e *verifyError) Unwrap() error { return e.kind }

// malformedStandard reports a malformed Standard Webhooks header; it
// matches ErrMalformedSignatureHeader.
func malformedStandard(reason string) error {
	return &verifyError{"webhook: malformed Standard Webhooks header: " + reason, ErrMalformedSignatureHeader}
}
