package paymentstest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/paymentsapi/payments-go/webhook"
)

// WebhookScheme is how the server signs its webhook deliveries.
type WebhookScheme string

// The signing schemes.
const (
	// SchemePayments signs each delivery with webhook.SignPayload in the
	// Payments-Signature header ("t=<unix>,v1=<hex>"), as the service's
	// documentation describes. It is the default.
	SchemePayments WebhookScheme = "payments"
	// SchemeStandard signs each delivery as a Standard Webhooks sender does
	// (webhook.SignStandard): webhook-id is the event's id, the same on
	// every attempt of one event; webhook-timestamp is the wall-clock time
	// of the attempt; webhook-signature has one "v1,<base64>" entry per
	// secret. Its secrets are "whsec_" secrets (webhook.NewStandardSecret
	// makes one), and a receiver verifies with webhook.NewStandardVerifier.
	SchemeStandard WebhookScheme = "standard"
)

// valid reports whether s is one of the schemes.
func (s WebhookScheme) valid() bool { return s == SchemePayments || s == SchemeStandard }

// setWebhookScheme changes, at run time, how deliveries are signed and with
// which secrets: a secret belongs to its scheme, so the two change
// together. The rules are those of WithWebhook's Scheme: under SchemeStandard
// the secrets must be whsec_ secrets, and without any the server makes one
// (WebhookSecrets returns it); under SchemePayments no secret means
// deliveries whose Payments-Signature carries only "t=...". It fails, and
// changes nothing, for an unknown scheme or an invalid secret. Every
// attempt from then on, retries of earlier events included, is signed the
// new way, as a sender's dashboard change would do.
func (s *Server) setWebhookScheme(scheme WebhookScheme, secrets ...string) error {
	if !scheme.valid() {
		return fmt.Errorf("paymentstest: SetWebhookScheme(%q): the scheme is %q or %q", string(scheme), SchemePayments, SchemeStandard)
	}
	secrets, err := schemeSecrets(scheme, secrets)
	if err != nil {
		return errors.New("paymentstest: SetWebhookScheme: " + err.Error())
	}
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scheme, d.secrets = scheme, secrets
	return nil
}

// webhookSchemeValue returns how deliveries are signed now.
func (s *Server) webhookSchemeValue() WebhookScheme {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.scheme
}

// currentWebhookSecrets returns the secrets deliveries are signed with now: those
// given to WithWebhook, SetWebhook or SetWebhookScheme, or the one the
// server made for SchemeStandard when none was given. Hand them to the
// receiver under test.
func (s *Server) currentWebhookSecrets() []string {
	d := s.hooks
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.secrets...)
}

// schemeSecrets checks secrets for scheme and returns the ones to sign
// with: a copy, or under SchemeStandard a new secret when none is given.
// Its errors never repeat a secret.
func schemeSecrets(scheme WebhookScheme, secrets []string) ([]string, error) {
	secrets = append([]string(nil), secrets...)
	if scheme != SchemeStandard {
		return secrets, nil
	}
	if len(secrets) == 0 {
		s, err := webhook.NewStandardSecret()
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	for i, s := range secrets {
		if _, err := webhook.NewStandardVerifier([]string{s}); err != nil || !strings.HasPrefix(s, "whsec_") {
			return nil, fmt.Errorf("webhook secret %d is not a Standard Webhooks secret: the %s scheme takes "+
				`"whsec_" followed by the base64 of the key, as webhook.NewStandardSecret makes`, i, SchemeStandard)
		}
	}
	return secrets, nil
}

// signDelivery returns the headers that sign body under scheme, and the
// signature header's value for the delivery log.
func signDelivery(scheme WebhookScheme, eventID string, at time.Time, body []byte, secrets []string) (http.Header, string, error) {
	if scheme != SchemeStandard {
		sig := webhook.SignPayload(body, at, secrets...)
		return http.Header{webhook.SignatureHeader: {sig}}, sig, nil
	}
	h, err := webhook.SignStandard(eventID, at, body, secrets...)
	if err != nil {
		return nil, "", err
	}
	return h, h.Get(webhook.StandardSignatureHeader), nil
}
