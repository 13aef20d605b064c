package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

var openUsage = `Usage: payments open

Prints the address of the sandbox's dashboard (cmd/payments-sandbox serves it
at the root of its port): a web page of its recipients, payments, virtual
accounts, balances and every event with each delivery attempt, with buttons
to redeliver and trigger events. It checks that the dashboard answers; the
real service has none.
`

// dashboardPath is where the sandbox serves its dashboard.
const dashboardPath = "/_dashboard/"

// open is "payments open".
func (c *cli) open(ctx context.Context, args []string) error {
	fs := c.newFlagSet("open", openUsage)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("open takes no arguments (got %q; see payments open --help)", pos[0])
	}
	base, err := c.sandboxBase()
	if err != nil {
		return err
	}
	u := base + dashboardPath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := sandboxHTTP.Do(req)
	if err != nil {
		return fmt.Errorf("the dashboard at %s does not answer: %w", u, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered HTTP %d: is PAYMENTS_BASE_URL a payments-sandbox started with -dashboard (the default)?", u, resp.StatusCode)
	}
	fmt.Fprintf(c.stdout, "%s\n", u)
	return nil
}

// sandboxHTTP is the client of the sandbox's own routes: no redirects
// followed, so the key never goes elsewhere.
var sandboxHTTP = &http.Client{
	Timeout:       30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// sandboxBase returns PAYMENTS_BASE_URL without its trailing slash, checked
// as the SDK checks it (c.client).
func (c *cli) sandboxBase() (string, error) {
	client, err := c.client()
	if err != nil {
		return "", err
	}
	client.Close()
	return strings.TrimSuffix(c.getenv(envBaseURL), "/"), nil
}

// adminEnvelope is the answer of the sandbox's admin API.
type adminEnvelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Code    string          `json:"code"`
	Stan    string          `json:"stan"`
	Data    json.RawMessage `json:"data"`
	Errors  []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

// admin calls a route of the sandbox's admin API with the API key, decodes
// its data into out and returns the stan. A refusal is an error with the
// sandbox's message and stan.
func (c *cli) admin(ctx context.Context, method, path string, body []byte, out any) (string, error) {
	base, err := c.sandboxBase()
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+c.getenv(envAPIKey))
	req.Header.Set("Content-Type", "application/json")
	resp, err := sandboxHTTP.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // its text repeats the URL, never the key
		}
		return "", fmt.Errorf("the sandbox did not answer: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("reading the sandbox's answer: %w", err)
	}
	var env adminEnvelope
	if json.Unmarshal(raw, &env) != nil {
		return "", fmt.Errorf("the answer (HTTP %d) is not the sandbox's JSON: is PAYMENTS_BASE_URL a payments-sandbox?", resp.StatusCode)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := env.Message
		for _, e := range env.Errors {
			msg += "; " + e.Field + " " + e.Message
		}
		if env.Code == "not_found" && strings.HasPrefix(env.Message, "no such ") {
			msg += " (this needs payments-sandbox with its admin API; the service has no such operation)"
		}
		return env.Stan, fmt.Errorf("HTTP %d %s: %s (stan %s)", resp.StatusCode, show(env.Code), show(msg), orNone(env.Stan))
	}
	if out != nil && len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return env.Stan, fmt.Errorf("the sandbox's data: %w", err)
		}
	}
	return env.Stan, nil
}
