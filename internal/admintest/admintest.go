// Package admintest calls the admin API of a paymentstest server (one
// started with paymentstest.WithSandbox) for the project's own tests: what
// the fake keeps off its Go API (issue 35: a small fake) a test reaches
// over HTTP, as code outside Go does. Every function returns the error the
// admin API answered, with its message.
package admintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/paymentsapi/payments-go/paymentstest"
)

// Call sends method path (under /_sandbox/) with body as JSON (nil: none)
// and decodes the answer's data into out (nil: ignored).
func Call(srv *paymentstest.Server, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, srv.URL()+"/_sandbox/"+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+srv.APIKey())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("admintest: %s /_sandbox/%s: %d %q (was the server started WithSandbox?)", method, path, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("admintest: %s /_sandbox/%s: %d %s", method, path, resp.StatusCode, env.Message)
	}
	if out != nil {
		return json.Unmarshal(env.Data, out)
	}
	return nil
}

// SetWebhookURL sends deliveries to url from now on ("" turns them off),
// keeping the scheme and secrets.
func SetWebhookURL(srv *paymentstest.Server, url string) error {
	return Call(srv, http.MethodPut, "webhook-url", map[string]string{"url": url}, nil)
}

// RedeliverFailed delivers again every event whose deliveries all failed,
// and returns their ids.
func RedeliverFailed(srv *paymentstest.Server) ([]string, error) {
	var out struct {
		EventIDs []string `json:"event_ids"`
	}
	err := Call(srv, http.MethodPost, "events/redeliver-failed", nil, &out)
	return out.EventIDs, err
}

// PauseDeliveries holds every delivery attempt until ResumeDeliveries.
func PauseDeliveries(srv *paymentstest.Server) error {
	return Call(srv, http.MethodPost, "deliveries/pause", nil, nil)
}

// ResumeDeliveries lets the attempts that PauseDeliveries held go.
func ResumeDeliveries(srv *paymentstest.Server) error {
	return Call(srv, http.MethodPost, "deliveries/resume", nil, nil)
}
