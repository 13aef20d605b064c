package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsapi/payments-go/internal/redact"
	"github.com/paymentsapi/payments-go/internal/request"
	"github.com/paymentsapi/payments-go/internal/surprise"
)

// Version is this SDK's version, sent in the User-Agent header of every request.
const Version = "0.1.0"

// Client talks to the Payments API. Make one with NewClient and share it: it is
// safe for concurrent use, and two clients with two API keys never interfere.
type Client struct {
	// Recipients creates and edits saved payment destinations.
	Recipients *RecipientsService
	// Payments initiates (quotes) and confirms payments.
	Payments *PaymentsService
	// VirtualAccounts opens accounts that receive money.
	VirtualAccounts *VirtualAccountsService
	// Webhooks triggers test events.
	Webhooks *WebhooksService

	// key is a pointer so that %+v of *c shows an address, never the key.
	key *credentials
	// masks is what the values the client returns mask when printed: the
	// key, behind a function (see masker).
	masks   *masker
	baseURL string // scheme://host[/prefix], no trailing slash
	// fixedURLs holds the URL of each operation whose path has no id, by
	// path, parsed once (see fixedURL).
	fixedURLs map[string]fixedURL
	userAgent string
	// userAgentHeader is {userAgent}, shared read-only by every call.
	userAgentHeader []string
	logger          *slog.Logger
	// shared is what all its calls share: the transport, the retry
	// budget, the 429 pause, the rate limit (internal/request).
	shared *request.Shared
	// idle is the transport NewClient made, for Close; nil with WithHTTPClient.
	idle       interface{ CloseIdleConnections() }
	middleware bool // the client has middleware
	// hook runs around every operation: the observers, then the logger.
	hook hook
	// surprised remembers the surprises already logged (surprise.go).
	surprised surprise.Set
	now       func() time.Time // the request path's clock too (see SetClockForTest)

	// retry is the retry settings of every call, unless it has its own.
	retry RetryPolicy
	// calls holds the calls that ended and may be reused (see do).
	calls sync.Pool
}

// credentials hold the API key; never logged, never in an error.
type credentials struct {
	raw    string
	bearer string   // "Bearer <key>"
	header []string // {bearer}, the Authorization header's value
}

// jsonMediaType is the value of Accept and Content-Type, shared read-only.
var jsonMediaType = []string{"application/json"}

// Format prints the client, with any verb, as its base URL, never its API
// key: payments.Client(https://...).
func (c *Client) Format(f fmt.State, _ rune) { fmt.Fprintf(f, "payments.Client(%s)", c.baseURL) }

// Close closes the idle connections of the transport NewClient made (not those
// of a WithHTTPClient client: its owner closes them). It is optional, for
// programs that make short-lived clients; the Client stays usable.
func (c *Client) Close() error {
	if c.idle != nil {
		c.idle.CloseIdleConnections()
	}
	return nil
}

// NewClient returns a Client that authenticates with apiKey. WithBaseURL is
// required: no default address is published. It refuses an empty key, a
// missing or unparsable base URL, and plain http to a host that is not
// loopback (see WithInsecurePlainHTTP). Its errors match ErrInvalidConfig.
func NewClient(apiKey string, opts ...Option) (*Client, error) {
	budget := DefaultRetryBudget()
	cfg := clientConfig{
		retry:  RetryPolicy{MaxAttempts: defaultMaxRetries + 1, WaitMin: defaultRetryWaitMin, WaitMax: defaultRetryWaitMax},
		budget: &budget,
	}
	for _, o := range opts {
		if err := o.applyClient(&cfg); err != nil {
			return nil, err
		}
	}
	if err := checkAPIKey(apiKey); err != nil {
		return nil, err
	}
	base, err := parseBaseURL(cfg.baseURL, cfg.plainHTTP)
	if err != nil {
		return nil, err
	}
	c := &Client{
		key:       &credentials{raw: apiKey, bearer: "Bearer " + apiKey, header: []string{"Bearer " + apiKey}},
		masks:     &masker{secrets: func() []string { return []string{apiKey} }},
		baseURL:   base,
		userAgent: userAgent(cfg.userAgent),
		logger:    cfg.logger,
		now:       time.Now,

		hook:       chainHooks(cfg.hooks()),
		middleware: len(cfg.middleware) > 0,
		retry:      cfg.retry,
	}
	c.userAgentHeader = []string{c.userAgent}
	c.fixedURLs = make(map[string]fixedURL, len(fixedPathOps))
	for _, path := range fixedPaths() {
		if req, err := http.NewRequest(http.MethodGet, c.baseURL+path, nil); err == nil {
			c.fixedURLs[path] = fixedURL{url: req.URL, host: req.Host}
		}
	}
	hc := cfg.httpClient
	if hc == nil {
		t := request.DefaultTransport()
		hc, c.idle = &http.Client{Transport: t, Timeout: 60 * time.Second}, t
	}
	c.shared = &request.Shared{HTTPClient: hc, Middleware: middlewareFuncs(cfg.middleware), Limiter: cfg.limiter}
	if b := cfg.budget; b != nil {
		c.shared.Budget = request.NewBudget(b.Tokens, b.RetryCost, b.TimeoutCost, b.SuccessRefund)
	}
	if c.logger != nil {
		c.shared.OnRetry = c.logRetry
	}
	c.shared.Init(cfg.retry.WaitMax)
	c.Recipients = &RecipientsService{c}
	c.Payments = &PaymentsService{c}
	c.VirtualAccounts = &VirtualAccountsService{c}
	c.Webhooks = &WebhooksService{c}
	return c, nil
}

// NewClientFromEnv is NewClient with the key from PAYMENTS_API_KEY and the base
// URL from PAYMENTS_BASE_URL; PAYMENTS_INSECURE_PLAIN_HTTP=1 adds
// WithInsecurePlainHTTP (a sandbox in a container network). opts override them.
func NewClientFromEnv(opts ...Option) (*Client, error) {
	if u := os.Getenv("PAYMENTS_BASE_URL"); u != "" {
		opts = append([]Option{WithBaseURL(u)}, opts...)
	}
	if os.Getenv("PAYMENTS_INSECURE_PLAIN_HTTP") == "1" {
		opts = append([]Option{WithInsecurePlainHTTP()}, opts...)
	}
	return NewClient(os.Getenv("PAYMENTS_API_KEY"), opts...)
}

// operation is an API operation as the pipeline runs it.
type operation struct {
	Operation
	// idempotent: send a random Idempotency-Key when the caller gave none.
	idempotent bool
	// dataOptional accepts a success without data (Trigger, Do).
	dataOptional bool
	// check, when set, marks an operation that creates or executes
	// something: its answer must carry the envelope's success flag, and
	// check returns what the decoded resource lacks to identify it ("" when
	// nothing). Either failure is a *MalformedResponseError (outcome
	// unknown), inside the pipeline, so that logs and observers see it.
	check func(out any) string
	// status is the success status assumed (docs/assumptions.md, "Status
	// codes"); another 2xx is a surprise. 0 assumes none (Do).
	status int
	// whole: the resource must be whole, its optional parts included (the
	// quote of an initiated payment): see finisher.
	whole bool
	// agree, when set, returns why the decoded resource disagrees with
	// sent, the params sent, and fields, the call's WithBodyField fields
	// ("" when it agrees), after every other check: a
	// *MalformedResponseError whose reason keeps the amounts it names
	// (keep). See amountagree.go.
	agree  func(sent any, fields []bodyField, out any) (reason string, keep []string)
	sent   any
	fields []bodyField
}

// fixedURL is the URL of an operation whose path has no id, as
// http.NewRequest parses it, and the request's Host it sets from it.
type fixedURL struct {
	url  *url.URL
	host string
}

// fixedPathOps are the operations whose path is their template.
var fixedPathOps = []*operation{opPaymentsInitiate, opPaymentsConfirm, opRecipientsCreate, opVirtualAccountsCreate}

// fixedPaths are the paths whose URL NewClient parses once (fixedURLs):
// the templates of fixedPathOps, and Webhooks.Trigger's path for each
// event kind the SDK names (a parse per call was 0.6 µs of a trigger's
// own 2.9, CPU profile, BENCHMARKS.md).
func fixedPaths() []string {
	paths := make([]string, 0, len(fixedPathOps)+len(knownKinds))
	for _, op := range fixedPathOps {
		paths = append(paths, op.PathTemplate)
	}
	for _, k := range knownKinds {
		paths = append(paths, triggerPath(k))
	}
	return paths
}

// call is one call as the Client runs it: its state on the request path,
// and what decoding its answer needs, in one allocation, which later calls
// of the Client reuse (see do).
type call struct {
	request.Call
	scratch decodeScratch
}

// newCall returns a call that runs st: one that an earlier call of c left
// (reuse), or a new one.
func (c *Client) newCall(st request.Call) *call {
	cl, _ := c.calls.Get().(*call)
	if cl == nil {
		cl = new(call)
	}
	cl.Reuse(st)
	return cl
}

// reuse hands cl to a later call of c. Only a call that succeeded gets here:
// its answer read, the body closed, no attempt ended by a transport error
// (request.Call.Reusable), and nothing it handed out points into it: the
// Response, the resource and its RawJSON hold copies or the body, a buffer
// of their own; the request, its headers and body reader, and the trace
// that net/http may still read are made per call (request.Call's wire),
// never reused. Tests: TestReusedCallsLeaveEveryAnswerIntact,
// TestReusedCallsSurviveAnAnswerBeforeTheBody.
func (c *Client) reuse(cl *call) {
	cl.Reuse(request.Call{}) // lets go of the context, the request, the out value
	cl.scratch = decodeScratch{}
	c.calls.Put(cl)
}

// do runs op, as every call of the SDK: it checks the options, sends body (JSON,
// when non-nil) to path (op's template with ids escaped in; "" for the template)
// with retries, and decodes the envelope's data into out (when non-nil).
func (c *Client) do(ctx context.Context, op *operation, path string, body, out any, opts []RequestOption) (r *Response, err error) {
	rc, err := requestOptions(opts)
	if err != nil {
		return nil, err
	}
	if path == "" {
		path = op.PathTemplate
	}
	cl := c.newCall(request.Call{Shared: c.shared, Name: op.Name, Method: op.Method, Template: op.PathTemplate, Path: path, Key: rc.idempotencyKey,
		Middleware: middlewareFuncs(rc.middleware)})
	// A call that succeeded is reused by a later one, after everything
	// that reads it here (the observers' end included, deferred below);
	// not after a failure or a panic.
	reusable := false
	defer func() {
		if reusable {
			c.reuse(cl)
		}
	}()
	st := &cl.Call
	rp := c.retry
	if rc.retryGiven {
		rp = rc.retry.over(rp)
	}
	st.AttemptTimeout, st.MaxRetries, st.WaitMin, st.WaitMax = rp.AttemptTimeout, rp.MaxAttempts-1, rp.WaitMin, rp.WaitMax
	if st.Key == "" && op.idempotent {
		u, err := uuid.NewRandom()
		if err != nil {
			return nil, fmt.Errorf("payments: making an idempotency key: %w", err)
		}
		st.Key = u.String()
	}
	st.Retryable = st.Key != "" || (op.Method != http.MethodPost && op.Method != http.MethodPatch)
	var payload []byte
	if body != nil || rc.bodyFields != nil {
		if payload, err = c.encodeBody(op, body, rc.bodyFields, &cl.scratch.wire); err != nil {
			return nil, err
		}
	}
	if op.agree != nil && len(rc.bodyFields) > 0 {
		withFields := *op
		withFields.fields = rc.bodyFields
		op = &withFields
	}
	var found surprises
	if c.hook != nil {
		var end func(*Response, error, []Surprise)
		ctx, end = c.hook(ctx, st)
		defer func() { end(r, err, found) }()
	}
	if st.Retryable {
		// net/http may write such a request twice in one attempt: count
		// the writes, so that Attempts never hides a request the service
		// may have processed.
		ctx = st.CountWrites(ctx)
	}
	r, err = c.send(ctx, cl, rc.header, payload, out, op, &found)
	if st.WaitHeader != "" {
		waitHeader(&found, st)
	}
	for i := range found {
		found[i].Detail = c.scrub(found[i].Detail) // the key, if the service echoed it
	}
	if len(found) > 0 {
		c.report(ctx, op.Name, found)
	}
	reusable = err == nil && st.Reusable()
	return r, err
}

// send makes the request, sends it with its retries (st.Do), and decodes
// the answer.
func (c *Client) send(ctx context.Context, cl *call, header http.Header, payload []byte, out any, op *operation, found *surprises) (*Response, error) {
	st := &cl.Call
	var req *http.Request
	var err error
	if fixed, ok := c.fixedURLs[st.Path]; ok {
		// The URL as http.NewRequest parsed it in NewClient, copied: a
		// parse per call cost 0.3-0.6 µs (CPU profile, BENCHMARKS.md).
		// The copy goes into the URL that NewRequestWithContext made of "".
		if req, err = http.NewRequestWithContext(ctx, st.Method, "", nil); err == nil {
			*req.URL, req.Host = *fixed.url, fixed.host
		}
	} else {
		req, err = http.NewRequestWithContext(ctx, st.Method, c.baseURL+st.Path, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("payments: building the request: %w", err)
	}
	for name, values := range header {
		req.Header[name] = values
	}
	// The values of the client's own headers are shared by all its calls,
	// read-only; middleware, which could write into them, gets copies.
	h := req.Header
	h["Authorization"], h["Accept"], h["User-Agent"] = c.key.header, jsonMediaType, c.userAgentHeader
	if payload != nil {
		h["Content-Type"] = jsonMediaType
	}
	if st.Key != "" {
		h["Idempotency-Key"] = st.KeyHeader()
	}
	if c.middleware || len(st.Middleware) > 0 {
		// Middleware may change the headers, even write into their
		// values: it gets copies, and the owned ones are kept to be set
		// again after it.
		st.Owned = make(http.Header, len(ownedHeaders))
		for name := range ownedHeaders {
			if v, ok := h[name]; ok {
				h[name], st.Owned[name] = slices.Clone(v), slices.Clone(v)
			}
		}
	}
	resp, err := st.Do(req, payload)
	defer st.End() // after the body is read and closed: the attempt's timeout covers reading it
	if err != nil {
		// net/http's *url.Error names the whole URL, query included, which
		// may carry personal data: the error keeps the path only, as logs do.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = &url.Error{Op: uerr.Op, URL: c.baseURL + pathOnly(st.Path), Err: uerr.Err}
		}
		terr := &TransportError{Method: st.Method, Path: pathOnly(st.Path), IdempotencyKey: st.Key, Attempts: st.Attempts(),
			Err: redact.Err(err, c.key.raw), BudgetExhausted: st.BudgetExhausted}
		return nil, terr
	}
	defer resp.Body.Close()
	r := &Response{StatusCode: resp.StatusCode, Header: resp.Header, IdempotencyKey: st.Key, Attempts: st.Attempts(),
		Replayed: idempotentReplay(resp.Header), masks: c.masks}
	raw, readErr := readBody(resp)
	err = c.decode(r, raw, readErr, out, op, found, &cl.scratch)
	if err != nil {
		if st.BudgetExhausted {
			markBudgetExhausted(err)
		}
		return nil, err
	}
	return r, nil
}

// markBudgetExhausted marks the *APIError in err as stopped by the retry
// budget. (Its own function: the pointer errors.As needs escapes, and would
// cost every call an allocation.)
func markBudgetExhausted(err error) {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		apiErr.BudgetExhausted = true
	}
}

// Do sends a request the SDK does not type yet through the pipeline of every
// call: authentication, retries, idempotency, the envelope and typed errors.
// path is below the base URL, starts with "/" and carries any query, encoded;
// escape the segments you interpolate with url.PathEscape. params, when not
// nil, is the JSON body, exactly as encoding/json writes it: a struct of your
// own that embeds an SDK params type sends its own fields too (the SDK's
// params have no encoding method of their own; bodyfields_test.go:
// TestDoSendsAStructEmbeddingParamsAsEncodingJSONWould); the envelope's
// data, if any, is decoded into out, when not nil. POST and PATCH are retried only with WithIdempotencyKey: Do never
// invents a key, since it cannot know whether the operation honours one.
//
//	_, err := client.Do(ctx, http.MethodPut, "/payments/recipients/"+url.PathEscape(id),
//		map[string]any{"account_name": "Ada N. Okafor"}, &recipient) // a map[string]any
func (c *Client) Do(ctx context.Context, method, path string, params, out any, opts ...RequestOption) (*Response, error) {
	var v validator
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		v.add("method", "must be GET, POST, PUT, PATCH or DELETE")
	}
	if u, err := url.Parse(path); err != nil || !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") ||
		u.Scheme != "" || u.Host != "" || u.Fragment != "" || hasDotSegment(u.Path) ||
		strings.ContainsFunc(path, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		v.add("path", `must be an absolute path such as "/payments/recipients", without "..", spaces or a host`)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	op := &operation{Operation: Operation{Name: "do", Method: method}, dataOptional: true}
	return c.do(ctx, op, path, params, out, opts)
}

func hasDotSegment(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

func pathOnly(p string) string {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i]
	}
	return p
}

// scrub masks the API key in text from the service that is logged as received
// (the stan), so that a service or proxy echoing the key cannot log it.
func (c *Client) scrub(s string) string { return redact.Secrets(s, c.key.raw) }
