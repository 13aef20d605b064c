package payments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-retryablehttp"
)

// MaxResponseBytes caps how much of a response body the SDK reads. A larger
// body gives a *MalformedResponseError (or, on an error status, an *APIError
// with the body cut).
const MaxResponseBytes = 4 << 20

// maxErrorBodyBytes caps APIError.Body.
const maxErrorBodyBytes = 16 << 10

// call is one operation for the pipeline.
type call struct {
	method string
	path   string // escaped, starting with "/"
	body   any    // JSON-encoded when non-nil
	// idempotent makes the pipeline send a random Idempotency-Key when the
	// caller gave none.
	idempotent bool
	// out receives data; a resource also gets the response metadata.
	out any
	// dataOptional accepts a success envelope without data.
	dataOptional bool
	// resp receives the response metadata on success.
	resp *Response
}

var ownedHeaders = map[string]bool{
	"Authorization": true, "Content-Type": true, "Accept": true,
	"User-Agent": true, "Idempotency-Key": true, "Content-Length": true, "Host": true,
}

// call sends cl through retries, checks the envelope and decodes data. Every
// operation of the SDK goes through here.
func (c *Client) call(ctx context.Context, cl *call, opts []RequestOption) error {
	var rc requestConfig
	for _, o := range opts {
		o(&rc)
	}
	if err := checkRequestConfig(&rc); err != nil {
		return err
	}
	key := rc.idempotencyKey
	if key == "" && cl.idempotent {
		u, err := uuid.NewRandom()
		if err != nil {
			return fmt.Errorf("payments: making an idempotency key: %w", err)
		}
		key = u.String()
	}
	var body any
	if cl.body != nil {
		b, err := json.Marshal(cl.body)
		if err != nil {
			return fmt.Errorf("payments: encoding the request: %w", err)
		}
		body = b
	}
	st := &callState{
		retryable: key != "" || (cl.method != http.MethodPost && cl.method != http.MethodPatch),
		method:    cl.method,
		path:      cl.path,
	}
	req, err := retryablehttp.NewRequestWithContext(context.WithValue(ctx, stateKey{}, st), cl.method, c.baseURL+cl.path, body)
	if err != nil {
		return fmt.Errorf("payments: building the request: %w", err)
	}
	for name, values := range rc.header {
		req.Header[name] = values
	}
	req.Header.Set("Authorization", c.key.bearer)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}

	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		terr := &TransportError{Method: cl.method, Path: pathOnly(cl.path), IdempotencyKey: key, Attempts: max(st.attempts, 1), Err: scrubErr(err, c.key.raw)}
		c.log(ctx, slog.LevelWarn, st, 0, "", key, start, terr)
		return terr
	}
	defer resp.Body.Close()
	r := &Response{StatusCode: resp.StatusCode, Header: resp.Header, IdempotencyKey: key, Attempts: max(st.attempts, 1)}
	raw, readErr := readCapped(resp.Body, resp.ContentLength, MaxResponseBytes)
	err = c.decode(cl, r, raw, readErr)
	level := slog.LevelDebug
	if err != nil {
		level = slog.LevelWarn
	}
	c.log(ctx, level, st, r.StatusCode, r.Stan, key, start, err)
	return err
}

func checkRequestConfig(rc *requestConfig) error {
	var v validator
	if k := rc.idempotencyKey; k != "" && (len(k) > 255 || !printableASCII(k)) {
		v.add("Idempotency-Key", "must be at most 255 printable ASCII characters")
	}
	for name, values := range rc.header {
		if ownedHeaders[name] || !validHeaderName(name) {
			v.add("header "+name, "cannot be set with WithHeader")
		}
		for _, val := range values {
			if strings.ContainsAny(val, "\r\n\x00") {
				v.add("header "+name, "value contains a line break")
			}
		}
	}
	return v.err()
}

var errBodyTooLarge = errors.New("body too large")

// readCapped reads at most limit bytes; a longer body returns the first
// limit bytes and errBodyTooLarge. size is the announced length, or -1: a
// buffer of that size (up to 64 KiB) plus one byte, to see the end, reads a
// usual answer with one allocation where io.ReadAll would grow its buffer
// three times.
func readCapped(r io.Reader, size, limit int64) ([]byte, error) {
	if size < 0 || size > 64<<10 {
		size = 512
	}
	b := make([]byte, 0, min(size, limit)+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(int64(cap(b)), limit+1)])
		b = b[:len(b)+n]
		switch {
		case int64(len(b)) > limit:
			return b[:limit], errBodyTooLarge
		case err == io.EOF:
			return b, nil
		case err != nil:
			return b, err
		}
	}
}

type envelope struct {
	Success *bool           `json:"success"`
	Message string          `json:"message"`
	Stan    string          `json:"stan"`
	Code    json.RawMessage `json:"code"`
	Errors  json.RawMessage `json:"errors"`
	Error   json.RawMessage `json:"error"`
	Data    json.RawMessage `json:"data"`
}

func (c *Client) decode(cl *call, r *Response, raw []byte, readErr error) error {
	if r.StatusCode < 200 || r.StatusCode > 299 {
		return c.apiError(r, raw, readErr)
	}
	malformed := func(reason string, err error) error {
		r.RawData = raw
		return newMalformed(reason, r, err, c.key.raw)
	}
	switch {
	case readErr == errBodyTooLarge:
		return malformed(fmt.Sprintf("the body exceeds %d bytes", MaxResponseBytes), nil)
	case readErr != nil:
		return malformed("reading the body failed", readErr)
	case len(bytes.TrimSpace(raw)) == 0 && r.StatusCode == http.StatusNoContent && cl.dataOptional:
		// 204 No Content is a complete answer for an operation whose
		// response carries no resource (Trigger, Do).
		cl.resp = r
		return nil
	case len(bytes.TrimSpace(raw)) == 0:
		return malformed("the body is empty", nil)
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return malformed(notEnvelopeReason(r.Header), err)
	}
	r.Stan, r.Message = c.scrub(env.Stan), c.scrub(env.Message)
	if env.Success != nil && !*env.Success {
		return c.apiErrorFrom(r, raw, &env)
	}
	if len(env.Data) == 0 || bytes.Equal(env.Data, []byte("null")) {
		if cl.dataOptional {
			cl.resp = r
			return nil
		}
		return malformed("the envelope has no data", nil)
	}
	r.RawData = env.Data
	if cl.out != nil {
		if err := json.Unmarshal(env.Data, cl.out); err != nil {
			return malformed("data does not match the expected resource", err)
		}
		if res, ok := cl.out.(resource); ok {
			res.setResponse(r, env.Data)
		}
	}
	cl.resp = r
	return nil
}

func notEnvelopeReason(h http.Header) string {
	ct := h.Get("Content-Type")
	switch {
	case strings.Contains(ct, "html"):
		return "the body is an HTML page (" + strconv.Quote(ct) + "), not the JSON envelope; a proxy may have answered"
	case ct != "" && !strings.Contains(ct, "json"):
		return "the body is " + strconv.Quote(ct) + ", not the JSON envelope"
	}
	return "the body is not the JSON envelope"
}

func (c *Client) log(ctx context.Context, level slog.Level, st *callState, status int, stan, key string, start time.Time, err error) {
	if c.logger == nil || !c.logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", st.method),
		slog.String("path", pathOnly(st.path)),
		slog.Int("status", status),
		slog.Int("attempts", max(st.attempts, 1)),
		slog.Duration("duration", time.Since(start)),
	}
	if stan != "" {
		attrs = append(attrs, slog.String("stan", c.scrub(stan)))
	}
	if key != "" {
		attrs = append(attrs, slog.String("idempotency_key", key))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	c.logger.LogAttrs(ctx, level, "payments: request", attrs...)
}

func pathOnly(p string) string {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i]
	}
	return p
}
