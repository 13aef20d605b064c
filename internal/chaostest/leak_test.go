package chaostest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/testlog"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// The secrets of the leak tests. The API key is not shaped like a JWT, so
// only the SDK's knowledge of its own key can hide it.
const (
	leakAPIKey        = "sk_live_9dQ2xV7mLp4RtY8wZ3nK6bJ1"
	leakWebhookSecret = "whsec_Zq8Lm3Vt6Rp1Xy4Nb7Kd2Fh9"
	leakBVN           = "22193847561"
	leakIDNumber      = "A07719348265"
	leakAccountNumber = "3017459826"
	leakPDAccount     = "GB33BUKB20201555555555" // payment_details.account_number, an IBAN
)

var leakImage = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("passport scan of Ada Okafor; "), 20))

// exposure collects every text a merchant's program could show: error
// strings in each verb and printed values. The webhook function adds to it
// from the handler's goroutines.
type exposure struct {
	mu    sync.Mutex
	texts []string
	errs  int
}

func (x *exposure) add(texts ...string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.texts = append(x.texts, texts...)
}

func (x *exposure) err(err error) {
	if err == nil {
		return
	}
	x.mu.Lock()
	x.errs++
	x.mu.Unlock()
	x.add(err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprint(err))
}

func (x *exposure) print(v any) {
	x.add(fmt.Sprintf("%v", v), fmt.Sprintf("%+v", v), fmt.Sprintf("%#v", v), fmt.Sprint(v))
}

func (x *exposure) all() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]string(nil), x.texts...)
}

// assertNoSecret fails for every secret found in any text.
func assertNoSecret(t *testing.T, what string, texts []string, secrets map[string]string) {
	t.Helper()
	for _, text := range texts {
		for name, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s: %s leaked in %q", what, name, text)
			}
		}
	}
}

func leakSecrets() map[string]string {
	return map[string]string{
		"API key":                        leakAPIKey,
		"webhook secret":                 leakWebhookSecret,
		"BVN":                            leakBVN,
		"identification number":          leakIDNumber,
		"identification image":           leakImage,
		"recipient account number":       leakAccountNumber,
		"payment_details account number": leakPDAccount,
	}
}

func leakCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestSecretsNeverLeak drives the whole journey (recipient with
// identification and payment details, update, virtual account with a BVN,
// initiate, confirm, trigger, an incoming payment, webhooks received through
// webhook.NewHandler) with faults injected, debug loggers on the client and
// the handler, invalid calls and calls that fail after all retries. No
// secret may appear in the logs, in any error string or in the printed
// params.
func TestSecretsNeverLeak(t *testing.T) {
	var clientLog, handlerLog testlog.Buffer
	debug := &slog.HandlerOptions{Level: slog.LevelDebug}
	clientLogger := slog.New(slog.NewTextHandler(&clientLog, debug))
	handlerLogger := slog.New(slog.NewJSONHandler(&handlerLog, debug))
	var x exposure

	// The merchant's webhook receiver. Its function fails the first
	// payment.completed delivery, so that a 500 and a redelivery happen.
	verifier, err := webhook.NewSignatureVerifier([]string{leakWebhookSecret})
	require.NoError(t, err)
	var (
		mu       sync.Mutex
		received = map[payments.EventType]int{}
		failed   bool
	)
	handler := webhook.NewHandler(verifier, func(_ context.Context, ev *payments.Event) error {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Type {
		case payments.EventPaymentCompleted:
			if !failed {
				failed = true
				return errors.New("order store unavailable")
			}
			_, err := ev.Payment()
			x.err(err)
		case payments.EventRecipientCreated:
			r, err := ev.Recipient()
			if err == nil {
				x.print(r.Identification)
			}
		case payments.EventVirtualAccountPaymentReceived:
			_, err := ev.VirtualAccountPayment()
			x.err(err)
		}
		received[ev.Type]++
		return nil
	}, webhook.WithLogger(handlerLogger))
	hook := httptest.NewServer(handler)
	defer hook.Close()

	srv := paymentstest.NewServer(
		paymentstest.WithAPIKey(leakAPIKey),
		paymentstest.WithWebhook(paymentstest.Webhook{URL: hook.URL, Secrets: []string{leakWebhookSecret}}),
		paymentstest.WithWebhook(paymentstest.Webhook{Retries: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond}}),
	)
	defer srv.Close()
	c := srv.Client(payments.WithLogger(clientLogger), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 4}))
	ctx := leakCtx(t)

	// The journey, each step through a fault.
	limit := payments.Amount{Decimal: decimal.RequireFromString("5000000")}
	rcptParams := &payments.RecipientCreateParams{
		AccountNumber: leakAccountNumber, AccountName: "Ada Okafor",
		AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN", AccountCountryCode: "NG",
		AmountLimit:    &limit,
		Identification: &payments.Identification{Type: payments.IdentificationType("passport"), Number: leakIDNumber, Image: payments.PersonalData(leakImage)},
		PaymentDetails: &payments.PaymentDetails{AccountNumber: leakPDAccount, BankName: "Barclays", SwiftCode: "BUKBGB22"},
	}
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusServiceUnavailable, Times: 1}))
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Drop: true, AfterWork: true, Times: 1}))
	rcpt, err := c.Recipients.Create(ctx, rcptParams)
	require.NoError(t, err)
	x.print(rcptParams.Identification)
	x.print(rcpt.Identification)

	update := &payments.RecipientUpdateParams{
		IdentificationType: payments.IdentificationType("national_id"), IdentificationNumber: leakIDNumber,
		PaymentDetails: &payments.PaymentDetails{AccountNumber: leakPDAccount},
	}
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusBadGateway, Times: 1}))
	_, err = c.Recipients.Update(ctx, rcpt.ID, update)
	require.NoError(t, err)
	x.print(update)

	vaParams := &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual, AccountName: "Ada Okafor", Email: "ada@example.com",
		FirstName: "Ada", LastName: "Okafor", BVN: leakBVN,
		Metadata: &payments.VirtualAccountMetadata{Country: "NG", Reference: "customer-7"},
	}
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Drop: true, AfterWork: true, Times: 1})) // the caller's key makes it safe to retry
	va, err := c.VirtualAccounts.Create(ctx, vaParams, payments.WithIdempotencyKey("va-customer-7"))
	require.NoError(t, err)
	x.print(vaParams)
	x.print(*vaParams)

	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusTooManyRequests, RetryAfter: time.Second, Times: 1}))
	p, err := c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("15000.50")}, Currency: "NGN", RecipientID: rcpt.ID, Reference: "order-1042",
	})
	require.NoError(t, err)
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Drop: true, AfterWork: true, Times: 1}))
	done, err := c.Payments.Confirm(ctx, p.ConfirmParams())
	require.NoError(t, err)
	require.Equal(t, payments.PaymentStatusCompleted, done.Status)

	_, err = c.Webhooks.Trigger(ctx, payments.EventRecipientVerified)
	require.NoError(t, err)
	_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), decimal.RequireFromString("2500"), "")
	require.NoError(t, err)
	require.NoError(t, srv.WaitForDeliveries(ctx))

	// What the merchant's own code would log about its params.
	clientLogger.DebugContext(ctx, "merchant: creating", "virtual_account", vaParams,
		"identification", rcptParams.Identification, "stored", rcpt.Identification)

	// Invalid calls: refused before sending, naming fields, not values.
	badImage := *rcptParams
	badImage.Identification = &payments.Identification{Number: leakIDNumber, Image: payments.PersonalData(leakImage + "!")}
	badImage.AccountNumber = leakAccountNumber + "$"
	_, err = c.Recipients.Create(ctx, &badImage)
	requireValidation(t, err, "identification.identification_image", "account_number")
	x.err(err)
	for _, bvn := range []string{leakBVN + "0", leakBVN[:10] + "X", " " + leakBVN} {
		bad := *vaParams
		bad.BVN = payments.PersonalData(bvn)
		_, err = c.VirtualAccounts.Create(ctx, &bad)
		requireValidation(t, err, "bvn")
		x.err(err)
		x.print(bad)
	}
	_, err = c.Recipients.Update(ctx, "../"+leakAccountNumber, &payments.RecipientUpdateParams{
		IdentificationNumber: payments.PersonalData(strings.Repeat(leakIDNumber, 6)), AccountNumber: leakPDAccount + "/" + leakAccountNumber,
	})
	requireValidation(t, err, "id", "identification_number", "account_number")
	x.err(err)

	// Answers from the service that are errors, and calls that fail after
	// all their retries.
	_, err = c.Recipients.Update(ctx, "3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11", update)
	requireAPIStatus(t, err, http.StatusNotFound)
	x.err(err)
	_, err = c.Payments.Confirm(ctx, p.ConfirmParams())
	requireAPIStatus(t, err, http.StatusUnprocessableEntity) // already confirmed, new key
	x.err(err)
	var out map[string]any
	_, err = c.Do(ctx, http.MethodPost, "/payments/recipients", map[string]any{
		"account_number": leakAccountNumber + "$$", "account_type": "individual",
		"identification": map[string]string{"identification_number": leakIDNumber, "identification_image": "%%%"},
	}, &out, payments.WithIdempotencyKey("raw-create-1"))
	requireAPIStatus(t, err, http.StatusUnprocessableEntity)
	x.err(err)
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusInternalServerError, Times: 10}))
	_, err = c.Payments.Initiate(ctx, &payments.PaymentInitiateParams{
		Amount: payments.Amount{Decimal: decimal.RequireFromString("1")}, Currency: "NGN", RecipientID: rcpt.ID, Reference: "order-1043",
	})
	requireAPIStatus(t, err, http.StatusInternalServerError)
	x.err(err)
	srv.ClearFaults()
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Drop: true, Times: 10}))
	_, err = c.Recipients.Create(ctx, rcptParams)
	var tErr *payments.TransportError
	require.ErrorAs(t, err, &tErr)
	x.err(err)
	srv.ClearFaults()
	require.NoError(t, srv.InjectFault(paymentstest.Fault{Status: http.StatusInternalServerError, Times: 1}))
	_, err = c.VirtualAccounts.Create(ctx, vaParams) // no key: not retried
	requireAPIStatus(t, err, http.StatusInternalServerError)
	x.err(err)
	wrongKey := srv.Client(payments.WithLogger(clientLogger))
	_, err = wrongKey.VirtualAccounts.Create(ctx, vaParams)
	require.NoError(t, err, "sanity: the same key works")
	badKey, err := payments.NewClient(leakAPIKey+"x", payments.WithBaseURL(srv.URL()), payments.WithLogger(clientLogger))
	require.NoError(t, err)
	_, err = badKey.Recipients.Create(ctx, rcptParams)
	requireAPIStatus(t, err, http.StatusUnauthorized)
	x.err(err)

	// Deliveries the receiver must refuse.
	body := srv.Events()[0].Body
	for _, d := range []struct {
		method string
		body   []byte
		header string
		want   int
	}{
		{http.MethodPost, body, webhook.SignPayload(body, time.Now(), "whsec_another"), http.StatusUnauthorized},
		{http.MethodPost, append([]byte(" "), body...), webhook.SignPayload(body, time.Now(), leakWebhookSecret), http.StatusUnauthorized},
		{http.MethodPost, body, webhook.SignPayload(body, time.Now().Add(-time.Hour), leakWebhookSecret), http.StatusUnauthorized},
		{http.MethodPost, []byte(`{"account_number":"` + leakAccountNumber + `"}`), webhook.SignPayload([]byte(`{"account_number":"`+leakAccountNumber+`"}`), time.Now(), leakWebhookSecret), http.StatusBadRequest},
		{http.MethodGet, nil, "", http.StatusMethodNotAllowed},
	} {
		req, err := http.NewRequestWithContext(ctx, d.method, hook.URL, bytes.NewReader(d.body))
		require.NoError(t, err)
		if d.header != "" {
			req.Header.Set(webhook.SignatureHeader, d.header)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, d.want, resp.StatusCode)
		x.add(string(answer))
	}
	_, err = webhook.ConstructEvent(body, http.Header{webhook.SignatureHeader: {webhook.SignPayload(body, time.Now(), "whsec_another")}}, leakWebhookSecret)
	require.Error(t, err)
	x.err(err)
	http.DefaultClient.CloseIdleConnections()

	// The journey really carried the secrets, and really logged.
	stored, ok := srv.Recipient(rcpt.ID)
	require.True(t, ok)
	require.Equal(t, leakIDNumber, string(stored.Identification.Number))
	require.Equal(t, leakAccountNumber, string(stored.AccountNumber))
	require.Equal(t, leakPDAccount, string(stored.PaymentDetails.AccountNumber))
	mu.Lock()
	assert.Positive(t, received[payments.EventPaymentCompleted])
	assert.Positive(t, received[payments.EventVirtualAccountPaymentReceived])
	assert.Positive(t, received[payments.EventRecipientCreated])
	mu.Unlock()
	logs := clientLog.String() + handlerLog.String()
	for _, want := range []string{
		"payments: retrying request", "payments: request", "idempotency_key=va-customer-7", "merchant: creating",
		"event processed", "event processing failed", "webhook refused: invalid signature", "webhook refused: not a webhook event",
	} {
		assert.Contains(t, logs, want)
	}
	x.mu.Lock()
	assert.GreaterOrEqual(t, x.errs, 10)
	x.mu.Unlock()

	secrets := leakSecrets()
	secrets["virtual account number"] = string(va.AccountNumber)
	secrets["Authorization header"] = "Bearer " + leakAPIKey
	assertNoSecret(t, "client log", []string{clientLog.String()}, secrets)
	assertNoSecret(t, "handler log", []string{handlerLog.String()}, secrets)
	assertNoSecret(t, "errors and printed values", x.all(), secrets)
	if t.Failed() {
		t.Logf("client log:\n%s\nhandler log:\n%s", clientLog.String(), handlerLog.String())
	}
}

func requireValidation(t *testing.T, err error, fields ...string) {
	t.Helper()
	var ve *payments.ValidationError
	require.ErrorAs(t, err, &ve)
	for _, f := range fields {
		assert.True(t, ve.Has(f), "%v names %s", err, f)
	}
}

func requireAPIStatus(t *testing.T, err error, status int) {
	t.Helper()
	var apiErr *payments.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, status, apiErr.StatusCode, "%v", err)
}

// TestErrorFormattingMasksEchoedSecrets covers a service (or a proxy in
// front of it) that echoes secrets in its error answers: the API key, a
// bearer header, a JWT, account numbers, a BVN and identification numbers in
// the message, the code, the stan and field errors, and in bodies that are
// not the envelope. The strings of *APIError and *MalformedResponseError
// never show them; ValidationError never repeats a value.
func TestErrorFormattingMasksEchoedSecrets(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZXJjaGFudC0xIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	echo := fmt.Sprintf("token %s (Authorization: Bearer %s) refused for account %s, BVN %s, ID %s, IBAN %s, session %s",
		leakAPIKey, leakAPIKey, leakAccountNumber, leakBVN, leakIDNumber, leakPDAccount, jwt)
	answers := map[string]struct {
		status int
		ctype  string
		body   string
	}{
		"/envelope": {http.StatusBadRequest, "application/json", fmt.Sprintf(
			`{"success":false,"message":%q,"code":%q,"stan":%q,"errors":[{"field":%q,"message":%q}]}`,
			echo, "bad_key_"+leakAPIKey, leakAPIKey, "account_"+leakAPIKey, echo)},
		"/errors-map": {http.StatusUnprocessableEntity, "application/json", fmt.Sprintf(
			`{"success":false,"error":{"message":%q,"code":"invalid"},"errors":{"account_number":[%q,%q]}}`, echo, echo, leakBVN)},
		"/html":         {http.StatusBadGateway, "text/html", "<html><body>" + echo + "</body></html>"},
		"/text":         {http.StatusInternalServerError, "text/plain", echo},
		"/success-200":  {http.StatusOK, "application/json", fmt.Sprintf(`{"success":false,"message":%q,"stan":"s-1"}`, echo)},
		"/not-json-2xx": {http.StatusOK, "text/html", "<html>" + echo + "</html>"},
		"/bad-data-2xx": {http.StatusOK, "application/json", fmt.Sprintf(
			`{"success":true,"message":%q,"stan":%q,"data":{"id":%q,"account_number":%q,"created_at":%q,"limit":%q}}`,
			echo, leakAPIKey, leakAPIKey, leakAccountNumber, leakAccountNumber+"T"+leakAPIKey, leakBVN+leakAPIKey)},
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", a.ctype)
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	defer api.Close()

	var log testlog.Buffer
	c, err := payments.NewClient(leakAPIKey, payments.WithBaseURL(api.URL), payments.WithRetries(payments.RetryPolicy{MaxAttempts: 1}),
		payments.WithLogger(slog.New(slog.NewJSONHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	require.NoError(t, err)
	var x exposure
	for path := range answers {
		var out payments.Recipient
		_, err := c.Do(leakCtx(t), http.MethodGet, path, nil, &out)
		require.Error(t, err, path)
		x.err(err)
		var apiErr *payments.APIError
		if errors.As(err, &apiErr) {
			for _, f := range apiErr.Errors {
				x.add(f.Field, f.Message)
			}
			x.add(apiErr.Message, string(apiErr.Code), apiErr.Stan)
		}
	}
	// A ValidationError made of values holding every secret.
	_, err = c.VirtualAccounts.Create(leakCtx(t), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountType(leakAPIKey), AccountName: leakAccountNumber + "\x00", Email: leakBVN,
		BVN: leakBVN + leakIDNumber, MobileNumber: payments.PersonalData(leakPDAccount + leakImage), FirstName: strings.Repeat(leakIDNumber, 30),
	})
	requireValidation(t, err, "account_type", "account_name", "email", "bvn", "mobile_number", "first_name")
	x.err(err)

	assert.Contains(t, strings.Join(x.all(), "\n"), "****9826", "account numbers keep their last four digits")
	assert.Contains(t, log.String(), "payments: request")
	secrets := leakSecrets()
	secrets["JWT"] = jwt
	assertNoSecret(t, "errors", x.all(), secrets)
	assertNoSecret(t, "log", []string{log.String()}, secrets)
}
