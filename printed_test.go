package payments_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/printcheck"
	"github.com/paymentsapi/payments-go/outcome"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The values the tests below echo into every member: printcheck's shaped
// secrets and personal data, and an API key of no particular shape (the
// client masks it because it knows it).
const (
	echoKey       = printcheck.MerchantKey
	echoJWT       = printcheck.JWT
	echoWhsec     = printcheck.Whsec
	echoHexSecret = printcheck.HexSecret
	echoAccount   = printcheck.Account
	echoEmail     = printcheck.Email
)

func filled[T any](s string) T {
	var v T
	printcheck.Fill(&v, s)
	return v
}

// printTable is a value of every exported type of payments, webhook,
// outcome and paymentstest (printcheck.Covered holds it to api/), with
// every text member set to s where the type has members: the values as a
// service that echoes s everywhere, or a merchant's code, would make them.
// Named string types hold one of their constants: they print as the
// vocabulary they are.
func printTable(t *testing.T, s string) map[string][]any {
	t.Helper()
	ctx := context.Background()
	c, err := payments.NewClient(echoKey, payments.WithBaseURL("https://api.payments.test"))
	require.NoError(t, err)
	sv, err := webhook.NewSignatureVerifier([]string{echoHexSecret, s})
	require.NoError(t, err)
	stdv, err := webhook.NewStandardVerifier([]string{echoWhsec})
	require.NoError(t, err)
	fn := func(context.Context, *payments.Event) error { return nil }
	store := webhook.NewMemoryClaimStore(10)
	_, err = store.Claim(ctx, s)
	require.NoError(t, err)
	h := webhook.NewHandler(sv, fn, webhook.WithClaimStore(store))
	hs := webhook.NewHandler(stdv, fn)
	hq := webhook.NewQueueHandler(sv, fn) // the hand-off mode
	ostore := outcome.NewMemoryStore()
	_, err = ostore.Update(ctx, s, func(o outcome.Outcome) (outcome.Outcome, bool, error) {
		return filled[outcome.Outcome](s), true, nil
	})
	require.NoError(t, err)
	tracker := outcome.NewTracker(ostore, outcome.WithEventList(c, time.Minute))
	srv := paymentstest.NewServer(paymentstest.WithAPIKey(echoKey),
		paymentstest.WithWebhook(paymentstest.Webhook{URL: "http://127.0.0.1:1/" + s, Secrets: []string{echoHexSecret}}))
	t.Cleanup(srv.Close)
	resp := filled[payments.Response](s)
	recipient := filled[payments.Recipient](s)

	return map[string][]any{
		"payments.APIError":                   {filled[payments.APIError](s), &payments.APIError{Header: resp.Header, Body: resp.Body, Message: s}},
		"payments.APIResource":                {recipient.APIResource},
		"payments.AccountNumber":              {payments.AccountNumber(s)},
		"payments.AccountType":                {payments.AccountTypeBusiness},
		"payments.Amount":                     {payments.Amount{Decimal: decimal.RequireFromString("25000000")}},
		"payments.Attempt":                    {filled[payments.Attempt](s)},
		"payments.Client":                     {c},
		"payments.ErrorCode":                  {payments.CodeQuoteExpired},
		"payments.Event":                      {filled[payments.Event](s)},
		"payments.EventListParams":            {filled[payments.EventListParams](s)},
		"payments.EventPage":                  {filled[payments.EventPage](s)},
		"payments.EventType":                  {payments.EventPaymentCompleted},
		"payments.FieldError":                 {filled[payments.FieldError](s)},
		"payments.Identification":             {filled[payments.Identification](s)},
		"payments.IdentificationType":         {payments.IdentificationPassport},
		"payments.MalformedResponseError":     {filled[payments.MalformedResponseError](s)},
		"payments.Middleware":                 {payments.Middleware(nil)},
		"payments.Operation":                  {filled[payments.Operation](s)},
		"payments.OperationObserver":          {payments.OperationObserver(nil)},
		"payments.OperationResult":            {filled[payments.OperationResult](s)},
		"payments.Option":                     {payments.WithUserAgent(s), payments.WithBaseURL(s)},
		"payments.Payer":                      {filled[payments.Payer](s)},
		"payments.Payment":                    {filled[payments.Payment](s)},
		"payments.PaymentConfirmParams":       {filled[payments.PaymentConfirmParams](s)},
		"payments.PaymentDetails":             {filled[payments.PaymentDetails](s)},
		"payments.PaymentInitiateParams":      {filled[payments.PaymentInitiateParams](s)},
		"payments.PaymentStatus":              {payments.PaymentStatusCompleted},
		"payments.PaymentsService":            {c.Payments},
		"payments.PersonalData":               {payments.PersonalData(s)},
		"payments.Quote":                      {filled[payments.Quote](s)},
		"payments.Recipient":                  {recipient},
		"payments.RecipientCreateParams":      {filled[payments.RecipientCreateParams](s)},
		"payments.RecipientUpdateParams":      {filled[payments.RecipientUpdateParams](s)},
		"payments.RecipientsService":          {c.Recipients},
		"payments.RequestOption":              {payments.WithHeader("X-Echo", s), payments.WithIdempotencyKey(s), payments.WithBodyField("echo", s)},
		"payments.Response":                   {resp},
		"payments.RetryBudget":                {payments.DefaultRetryBudget()},
		"payments.RetryPolicy":                {payments.RetryPolicy{MaxAttempts: 3}},
		"payments.Surprise":                   {filled[payments.Surprise](s)},
		"payments.SurpriseKind":               {payments.SurpriseUnknownField},
		"payments.TransportError":             {filled[payments.TransportError](s)},
		"payments.TriggerResult":              {filled[payments.TriggerResult](s)},
		"payments.ValidationError":            {filled[payments.ValidationError](s)},
		"payments.VirtualAccount":             {filled[payments.VirtualAccount](s)},
		"payments.VirtualAccountCreateParams": {filled[payments.VirtualAccountCreateParams](s)},
		"payments.VirtualAccountMetadata":     {filled[payments.VirtualAccountMetadata](s)},
		"payments.VirtualAccountPayment":      {filled[payments.VirtualAccountPayment](s)},
		"payments.VirtualAccountsService":     {c.VirtualAccounts},
		"payments.WebhooksService":            {c.Webhooks},

		"webhook.Checkpoint":        {filled[webhook.Checkpoint](s)},
		"webhook.Claim":             {filled[webhook.Claim](s)},
		"webhook.ClaimStatus":       {webhook.ClaimAcquired},
		"webhook.ClaimStore":        {webhook.ClaimStore(store)},
		"webhook.DeliveryObserver":  {webhook.DeliveryObserver(nil)},
		"webhook.DeliveryOutcome":   {webhook.OutcomeProcessed},
		"webhook.DeliveryResult":    {filled[webhook.DeliveryResult](s)},
		"webhook.EnqueueFunc":       {webhook.EnqueueFunc(fn)},
		"webhook.EventFunc":         {webhook.EventFunc(fn)},
		"webhook.EventIDVerifier":   {webhook.EventIDVerifier(stdv)},
		"webhook.Handler":           {h, hs, hq},
		"webhook.HandlerOption":     {webhook.WithClaimStore(store)},
		"webhook.MemoryClaimStore":  {store},
		"webhook.ReconcileResult":   {filled[webhook.ReconcileResult](s)},
		"webhook.SignatureVerifier": {sv},
		"webhook.StandardVerifier":  {stdv},
		"webhook.Verifier":          {webhook.Verifier(sv), webhook.Verifier(stdv)},
		"webhook.VerifierOption":    {webhook.WithSignatureTolerance(time.Minute)},

		"outcome.ConflictError": {filled[outcome.ConflictError](s)},
		"outcome.Effect":        {outcome.EffectForward},
		"outcome.Kind":          {outcome.KindPayment},
		"outcome.MemoryStore":   {ostore},
		"outcome.Option":        {outcome.WithEventList(c, time.Minute)},
		"outcome.Outcome":       {filled[outcome.Outcome](s)},
		"outcome.Result":        {filled[outcome.Result](s)},
		"outcome.State":         {outcome.StateCompleted},
		"outcome.Step":          {filled[outcome.Step](s)},
		"outcome.Store":         {outcome.Store(ostore)},
		"outcome.Subject":       {filled[outcome.Subject](s)},
		"outcome.Subscriber":    {outcome.Subscriber(ostore)},
		"outcome.Tracker":       {tracker},
		"outcome.UpdateFunc":    {outcome.UpdateFunc(nil)},

		"paymentstest.Delivery":        {filled[paymentstest.Delivery](s)},
		"paymentstest.DeliveryAttempt": {filled[paymentstest.DeliveryAttempt](s)},
		"paymentstest.DeliveryStatus":  {paymentstest.DeliveryDelivered},
		"paymentstest.Event":           {filled[paymentstest.Event](s)},
		"paymentstest.Fault":           {filled[paymentstest.Fault](s)},
		"paymentstest.IncomingPayment": {filled[paymentstest.IncomingPayment](s)},
		"paymentstest.Option":          {paymentstest.WithAPIKey(s)},
		"paymentstest.RequestRecord":   {filled[paymentstest.RequestRecord](s)},
		"paymentstest.Sandbox":         {filled[paymentstest.Sandbox](s)},
		"paymentstest.Server":          {srv},
		"paymentstest.Webhook":         {filled[paymentstest.Webhook](s)},
		"paymentstest.WebhookScheme":   {paymentstest.SchemeStandard},
	}
}

// TestNoPrintedValueShowsASecret: a value of every exported type of
// payments, webhook, outcome and paymentstest (the table is held to api/: a
// new type fails until it is in it), with the API key, a webhook secret or
// personal data in every text member, header and error, prints (fmt, every
// verb, by value and pointer, in slices and maps) and logs (slog's text and
// JSON handlers) without it. The clients, verifiers, handlers and servers
// hold the key and the secrets themselves.
func TestNoPrintedValueShowsASecret(t *testing.T) {
	printcheck.All(t, []string{"api/github.com_paymentsapi_payments-go.txt", "api/github.com_paymentsapi_payments-go_webhook.txt",
		"api/github.com_paymentsapi_payments-go_outcome.txt", "api/github.com_paymentsapi_payments-go_paymentstest.txt"},
		printTable, echoKey, echoHexSecret, echoWhsec)
}

// echoJSON is fixture (JSON) with every string member that is not a time,
// an amount or a currency replaced by s, and one member more, unknown to the SDK, named
// and valued s.
func echoJSON(t *testing.T, fixture, s string) json.RawMessage {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(fixture), &v))
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if _, err := time.Parse(time.RFC3339, x); err == nil {
				return x
			}
			if _, err := decimal.NewFromString(x); err == nil {
				return x
			}
			return s
		case map[string]any:
			for k, e := range x {
				if k != "currency" { // the SDK holds it to the one sent
					x[k] = walk(e)
				}
			}
			x[s] = s
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	b, err := json.Marshal(walk(v))
	require.NoError(t, err)
	return b
}

// echoService answers every call as a service (or a proxy) that echoes s in
// every header and every text member of every body: successes, a refusal
// with field errors, a body that is not the envelope and an HTML page.
func echoService(t *testing.T, s string) *httptest.Server {
	event := `{"id":"evt-1","event":"payment.completed","created_at":"2025-03-01T10:00:00Z","data":` + paymentJSON + `}`
	bodies := map[string]struct {
		status int
		data   string
	}{
		"POST /payments/recipients":                       {201, recipientJSON},
		"PUT /payments/recipients/" + recipientUUID:       {200, recipientJSON},
		"POST /payments/initiate":                         {200, paymentJSON},
		"POST /payments/confirm":                          {200, confirmedPaymentJSON},
		"POST /accounts/virtual-accounts":                 {200, virtualAccountJSON},
		"GET /webhooks/events":                            {200, `{"events":[` + event + `],"has_more":false}`},
		"POST /webhooks/events/trigger/payment.completed": {200, `{"event_id":"evt-1","status":"sent"}`},
		"GET /refused":                                    {422, `null`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, name := range printcheck.HeaderNames {
			if name != "Content-Type" && name != "Retry-After" {
				w.Header().Set(name, s)
			}
		}
		w.Header().Set("X-"+strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, s), s)
		switch r.URL.Path {
		case "/not-json":
			w.WriteHeader(200)
			_, _ = io.WriteString(w, "echo: "+s)
			return
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			_, _ = io.WriteString(w, "<html><body>Bad gateway: "+s+"</body></html>")
			return
		}
		b, ok := bodies[r.Method+" "+r.URL.Path]
		if !ok {
			t.Errorf("echo service: no answer for %s %s", r.Method, r.URL.Path)
			w.WriteHeader(404)
			return
		}
		env := map[string]any{"success": b.status < 300, "message": s, "stan": s, "code": s, s: s,
			"data": echoJSON(t, b.data, s), "errors": []map[string]string{{"field": s, "message": s}}}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(b.status)
		require.NoError(t, json.NewEncoder(w).Encode(env))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestNoValueFromTheServicePrintsTheKey: against a service that echoes the
// API key (a key of no particular shape, which only the Client knows, or
// one shaped as a JWT), an account number or an email address in every
// header and every text member
// of every answer, every value the client returns (resources, their
// responses, quotes, events, pages, trigger results, every kind of error),
// what its observers and middleware see, and its own log lines print and
// log without it. The values still come back from encoding/json and
// encoding/gob as they were.
func TestNoValueFromTheServicePrintsTheKey(t *testing.T) {
	for _, tc := range []struct{ key, echo string }{
		{echoKey, echoKey}, {echoJWT, echoJWT}, {echoKey, echoAccount}, {echoKey, echoEmail},
	} {
		key, echo := tc.key, tc.echo
		t.Run(echo, func(t *testing.T) {
			ctx := context.Background()
			srv := echoService(t, echo)
			var logs bytes.Buffer
			var seen []any
			observer := func(ctx context.Context, op payments.Operation) (context.Context, func(payments.OperationResult)) {
				seen = append(seen, op)
				return ctx, func(res payments.OperationResult) { seen = append(seen, res) }
			}
			c, err := payments.NewClient(key, payments.WithBaseURL(srv.URL),
				payments.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
				payments.WithObserver(observer))
			require.NoError(t, err)
			spy := payments.WithMiddleware(func(r *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
				a, ok := payments.AttemptFromContext(r.Context())
				require.True(t, ok)
				seen = append(seen, a)
				return next(r)
			})

			var values []any
			keep := func(v any, err error) {
				t.Helper()
				values = append(values, v)
				if err != nil {
					values = append(values, err)
				}
			}
			r, err := c.Recipients.Create(ctx, validRecipientParams(), spy)
			keep(r, err)
			keep(c.Recipients.Update(ctx, recipientUUID, &payments.RecipientUpdateParams{AccountName: "Ada"}))
			p, err := c.Payments.Initiate(ctx, validInitiateParams())
			keep(p, err)
			keep(c.Payments.Confirm(ctx, &payments.PaymentConfirmParams{Reference: "order-1042", QuoteID: quoteUUID}))
			keep(c.VirtualAccounts.Create(ctx, validVirtualAccountParams()))
			page, err := c.Webhooks.ListEventsPage(ctx, nil)
			keep(page, err)
			keep(c.Webhooks.Trigger(ctx, payments.EventPaymentCompleted))
			for _, path := range []string{"/refused", "/not-json", "/html"} {
				keep(c.Do(ctx, http.MethodGet, path, nil, nil, payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1})))
			}
			require.NotNil(t, r, "the recipient decodes")
			require.NotNil(t, p, "the payment decodes")
			require.NotNil(t, page, "the page decodes")
			values = append(values, r.LastResponse(), *r.LastResponse(), p.Quote)
			if echo != echoKey {
				// An event (listed, or delivered to a webhook) knows no
				// Client: it masks a key by its shape (a JWT, as the
				// specification's keys are), and the page it came in
				// masks any key.
				values = append(values, page.Events[0])
			}
			var malformed *payments.MalformedResponseError
			for _, v := range values {
				if err, ok := v.(error); ok && errors.As(err, &malformed) {
					values = append(values, malformed.Response)
				}
			}

			for i, v := range append(values, seen...) {
				printcheck.Check(t, fmt.Sprintf("value %d (%T)", i, v), v, echo, key)
			}
			for _, enc := range printcheck.Encodings(echo) {
				assert.NotContains(t, logs.String(), enc, "the client's own log lines")
			}

			for _, v := range []any{r, p, page, page.Events[0]} {
				b := assertRoundTrips(t, v)
				assert.Contains(t, string(b), echo, "encoding/json keeps what the service sent: %T", v)
			}
			assertRoundTrips(t, r.LastResponse())
		})
	}
}

// assertRoundTrips: v (a pointer) comes back from encoding/json and
// encoding/gob with the same exported fields; it returns v's JSON.
func assertRoundTrips(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	back := reflect.New(reflect.TypeOf(v).Elem())
	require.NoError(t, json.Unmarshal(b, back.Interface()))
	b2, err := json.Marshal(back.Interface())
	require.NoError(t, err)
	assert.JSONEq(t, string(b), string(b2), "encoding/json: %T", v)

	var buf bytes.Buffer
	require.NoError(t, gob.NewEncoder(&buf).Encode(v))
	gback := reflect.New(reflect.TypeOf(v).Elem())
	require.NoError(t, gob.NewDecoder(&buf).Decode(gback.Interface()))
	b3, err := json.Marshal(gback.Interface())
	require.NoError(t, err)
	assert.JSONEq(t, string(b), string(b3), "encoding/gob: %T", v)
	return b
}

// TestPrintedAmountsStayWhole: amounts are never masked, however many
// digits they have and whatever field holds them (an exchange rate names
// no money word), printed with any verb or logged.
func TestPrintedAmountsStayWhole(t *testing.T) {
	big, rate := decimal.RequireFromString("25000000"), decimal.RequireFromString("12345678")
	quote := &payments.Quote{QuoteID: "q-1", Amount: big, Fee: rate, ExchangeRate: rate, TotalAmount: big}
	values := []any{
		payments.Payment{ID: "p-1", Amount: big, Quote: quote},
		payments.Recipient{ID: "r-1", Limit: &big},
		payments.PaymentInitiateParams{Amount: payments.Amount{Decimal: big}},
		payments.VirtualAccountPayment{ID: "t-1", Amount: big},
		paymentstest.IncomingPayment{ID: "t-2", Amount: big},
	}
	for _, v := range values {
		for how, s := range printcheck.Forms(v) {
			assert.Contains(t, s, "25000000", "%T printed as %s", v, how)
		}
	}
	for how, s := range printcheck.Forms(quote) {
		assert.Contains(t, s, "12345678", "the quote's rate printed as %s", how)
	}
}
