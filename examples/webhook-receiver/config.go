package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/paymentsapi/payments-go/webhook"
)

// The names of the environment variables, for messages; main reads them.
const (
	envSecret = "PAYMENTS_WEBHOOK_SECRET"
	envScheme = "PAYMENTS_WEBHOOK_SCHEME"
	envStore  = "PAYMENTS_WEBHOOK_STORE"
	envAddr   = "PAYMENTS_WEBHOOK_ADDR"

	envReconcileEvery  = "PAYMENTS_RECONCILE_EVERY"
	envReconcileWindow = "PAYMENTS_RECONCILE_WINDOW"
)

// environment holds the variables as read, before any check.
type environment struct {
	Secret string // PAYMENTS_WEBHOOK_SECRET
	Scheme string // PAYMENTS_WEBHOOK_SCHEME
	Store  string // PAYMENTS_WEBHOOK_STORE
	Addr   string // PAYMENTS_WEBHOOK_ADDR

	ReconcileEvery  string // PAYMENTS_RECONCILE_EVERY
	ReconcileWindow string // PAYMENTS_RECONCILE_WINDOW
}

// config is the receiver's configuration.
type config struct {
	addr     string
	verifier webhook.Verifier
	store    storeConfig
	// reconcile is off when its every is 0.
	reconcile reconcileConfig
}

// storeConfig says where processed event ids are kept.
type storeConfig struct {
	kind     string   // "memory", "postgres" or "redis"
	url      string   // the connection URL; it may hold a password: never print it
	redacted string   // the URL to print: password masked, query dropped
	secrets  []string // what errors must never show: the password, in each form
}

// loadConfig checks the environment and reports every problem at once. Its
// errors never repeat a secret or a password.
func loadConfig(env environment) (config, error) {
	var problems []error
	cfg := config{addr: env.Addr}
	if cfg.addr == "" {
		cfg.addr = defaultAddr
	}

	verifier, err := newVerifier(env.Scheme, parseSecrets(env.Secret))
	if err != nil {
		problems = append(problems, err)
	}
	cfg.verifier = verifier

	cfg.store, err = parseStore(env.Store)
	if err != nil {
		problems = append(problems, err)
	}

	cfg.reconcile, err = parseReconcile(env.ReconcileEvery, env.ReconcileWindow, cfg.store.kind)
	if err != nil {
		problems = append(problems, err)
	}
	return cfg, errors.Join(problems...)
}

// parseSecrets splits a comma-separated list of secrets, dropping blanks.
func parseSecrets(env string) []string {
	var secrets []string
	for _, s := range strings.Split(env, ",") {
		if s = strings.TrimSpace(s); s != "" {
			secrets = append(secrets, s)
		}
	}
	return secrets
}

// newVerifier returns the verifier of the signing scheme: "payments" (or
// "") for the Payments-Signature header, "standard" for Standard Webhooks.
func newVerifier(scheme string, secrets []string) (webhook.Verifier, error) {
	scheme = strings.ToLower(strings.TrimSpace(scheme))
	var problems []error
	if scheme != "" && scheme != "payments" && scheme != "standard" {
		problems = append(problems, fmt.Errorf("%s=%q: use payments (the Payments-Signature header, the default) "+
			"or standard (Standard Webhooks)", envScheme, scheme))
	}
	if len(secrets) == 0 {
		problems = append(problems, fmt.Errorf("%s is not set: set it to the endpoint's signing secret from the "+
			"dashboard (two secrets, comma-separated, while rotating)", envSecret))
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	if scheme == "standard" {
		// Dedupes on the signed webhook-id header.
		v, err := webhook.NewStandardVerifier(secrets)
		if err != nil {
			return nil, fmt.Errorf("%s: %s=standard takes whsec_ secrets, as the sender shows them: %w", envSecret, envScheme, err)
		}
		return v, nil
	}
	return webhook.NewSignatureVerifier(secrets)
}

// parseStore reads PAYMENTS_WEBHOOK_STORE: "" keeps processed ids in this
// process's memory; postgres:// or postgresql:// is PostgreSQL; redis:// or
// rediss:// (TLS) is Redis. It connects to nothing.
func parseStore(raw string) (storeConfig, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return storeConfig{kind: "memory"}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		// url.Parse's error quotes the whole value, password included.
		return storeConfig{}, fmt.Errorf("%s is not a URL such as postgres://user:password@host:5432/db "+
			"or redis://:password@host:6379/0", envStore)
	}
	sc := storeConfig{
		url:      u.Scheme + raw[len(u.Scheme):], // the drivers want the scheme in lower case
		redacted: redactURL(u),
		secrets:  urlSecrets(u),
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		sc.kind = "postgres"
	case "redis", "rediss":
		sc.kind = "redis"
	default:
		return storeConfig{}, fmt.Errorf("%s=%s: unsupported scheme %q: use postgres:// or postgresql:// (PostgreSQL), "+
			"redis:// or rediss:// (Redis), or leave it unset to keep processed ids in memory", envStore, sc.redacted, u.Scheme)
	}
	return sc, nil
}

// redactURL is u without its query (pgx takes a password there too) and
// with its password masked (url.URL.Redacted).
func redactURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = "", false, "", ""
	return c.Redacted()
}

// urlSecrets returns the password of u in each form an error could quote:
// as written in the URL, decoded, and from a password query parameter.
func urlSecrets(u *url.URL) []string {
	var out []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
			if _, escaped, ok := strings.Cut(u.User.String(), ":"); ok && escaped != p {
				out = append(out, escaped)
			}
		}
	}
	for _, name := range []string{"password", "sslpassword"} {
		for _, p := range u.Query()[name] {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
