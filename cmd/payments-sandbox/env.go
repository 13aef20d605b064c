package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/paymentsapi/payments-go/internal/loopback"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// The variables the sandbox prints export lines for, and reads back: a
// merchant who pasted them into the sandbox's shell keeps the same key and
// secret across restarts, so a receiver already running keeps accepting
// the deliveries.
const (
	envBaseURL = "PAYMENTS_BASE_URL"
	envAPIKey  = "PAYMENTS_API_KEY"
	envSecret  = "PAYMENTS_WEBHOOK_SECRET"
	envScheme  = "PAYMENTS_WEBHOOK_SCHEME"
)

// credentials are the API key, webhook scheme and secrets the sandbox
// runs with, and where they came from.
type credentials struct {
	apiKey  string // "": the server makes one
	scheme  paymentstest.WebhookScheme
	secrets []string // none: the server makes one (standard scheme)
	// schemeFromEnv is set when PAYMENTS_WEBHOOK_SCHEME was set, even if a
	// flag won: the export lines then say the scheme, so that pasting them
	// replaces a stale value.
	schemeFromEnv bool
	// reused names the variables taken from the environment.
	reused []string
}

// resolveCredentials picks each value from its flag when the flag was
// given, else from the environment when the variable is set, else a new
// one. Its errors never repeat a key or a secret.
func resolveCredentials(getenv func(string) string, set map[string]bool, apiKey, scheme, secret string) (c credentials, err error) {
	switch v := strings.TrimSpace(getenv(envScheme)); {
	case set["webhook-scheme"]:
		c.schemeFromEnv = v != ""
	case v != "":
		scheme, c.schemeFromEnv = v, true
		defer func() { c.reused = append(c.reused, envScheme) }() // named last
	}
	c.scheme = paymentstest.WebhookScheme(strings.ToLower(strings.TrimSpace(scheme)))
	if c.scheme != paymentstest.SchemePayments && c.scheme != paymentstest.SchemeStandard {
		what := fmt.Sprintf("-webhook-scheme %q", scheme)
		if !set["webhook-scheme"] {
			what = fmt.Sprintf("%s=%q", envScheme, scheme)
		}
		return c, fmt.Errorf("%s: use payments (the Payments-Signature header) or standard (Standard Webhooks)", what)
	}

	// A shell set up for the real service (PAYMENTS_BASE_URL elsewhere than
	// this machine) holds a real key and secret: never adopt, and so never
	// print, those.
	foreign := !loopbackURL(getenv(envBaseURL))
	if foreign {
		getenv = func(name string) string {
			if name == envAPIKey || name == envSecret {
				return ""
			}
			return getenv(name)
		}
	}
	switch v := strings.TrimSpace(getenv(envAPIKey)); {
	case apiKey != "":
		c.apiKey = apiKey
	case v != "":
		if strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return c, fmt.Errorf("%s holds spaces or control characters: unset it for a new key, or export the one the sandbox printed", envAPIKey)
		}
		c.apiKey = v
		c.reused = append(c.reused, envAPIKey)
	}

	switch v := getenv(envSecret); {
	case secret != "":
		c.secrets = []string{secret}
	case strings.TrimSpace(v) != "":
		// Comma-separated while a secret rotates, as examples/webhook-receiver
		// reads it.
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.secrets = append(c.secrets, s)
			}
		}
		if err := fitsScheme(c.scheme, c.secrets); err != nil {
			source := "-webhook-scheme"
			if !set["webhook-scheme"] {
				source = "the default"
				if c.schemeFromEnv {
					source = envScheme
				}
			}
			return c, fmt.Errorf("%s does not fit the %s scheme (%s): %w; unset %s for a new secret, or set the scheme it was made for",
				envSecret, c.scheme, source, err, envSecret)
		}
		c.reused = append(c.reused, envSecret)
	case c.scheme == paymentstest.SchemePayments:
		// A secret even without a URL: the admin API can set one later.
		// Under the standard scheme the server makes a whsec_ one itself;
		// this scheme's secrets start with pssec_, so that they are not
		// taken for Standard Webhooks secrets (whsec_). Any secret without
		// spaces is accepted, the whsec_ ones printed before included.
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return c, err
		}
		c.secrets = []string{"pssec_" + hex.EncodeToString(b)}
	}
	return c, nil
}

// fitsScheme checks secrets from the environment against the scheme that
// will sign with them. Its errors never repeat a secret.
func fitsScheme(scheme paymentstest.WebhookScheme, secrets []string) error {
	if scheme == paymentstest.SchemeStandard {
		if _, err := webhook.NewStandardVerifier(secrets); err != nil {
			// "payments: invalid configuration: NewStandardVerifier:
			// secret 0 is hex, ...": keep what is about the secret.
			msg := err.Error()
			if i := strings.Index(msg, "secret "); i >= 0 {
				msg = msg[i:]
			}
			// The verifier's advice (the service's dashboard) is not the
			// sandbox's: its own follows.
			if i := strings.Index(msg, ": give this endpoint's signing secret"); i >= 0 {
				msg = msg[:i]
			}
			return errors.New(msg)
		}
		return nil
	}
	for i, s := range secrets {
		if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return fmt.Errorf("secret %d holds spaces or control characters", i)
		}
	}
	return nil
}

// joinNames lists names as "A", "A and B" or "A, B and C".
func joinNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// loopbackURL reports whether u is empty or a URL whose host is this
// machine (a sandbox's, as its export lines give it).
func loopbackURL(u string) bool {
	u = strings.TrimSpace(u)
	if u == "" {
		return true
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return false
	}
	return loopback.Host(parsed.Hostname())
}
