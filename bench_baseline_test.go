package payments_test

// The baseline of the benchmarks in bench_test.go: each operation written by
// hand with net/http and encoding/json alone, sending the same bytes.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"time"

	"github.com/google/uuid"
	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/benchbaseline"
	"github.com/shopspring/decimal"
)

// baseline is the request written by hand: net/http, encoding/json, the same
// headers as the SDK, an http.Client configured like the SDK's default one
// (pool size, timeouts, no redirects), and no validation, retries or error
// typing.
type baseline struct {
	hc        *http.Client
	baseURL   string
	auth      string
	userAgent string
}

func newBaseline(baseURL string) *baseline {
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   128,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &baseline{
		hc: &http.Client{
			Transport: t,
			Timeout:   60 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		baseURL:   baseURL,
		auth:      "Bearer " + benchKey,
		userAgent: fmt.Sprintf("payments-go/%s (%s; %s/%s)", payments.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH),
	}
}

type baselineEnvelope[T any] struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Stan    string `json:"stan"`
	Data    T      `json:"data"`
}

// baselineDo sends in (when non-nil) as JSON and decodes the envelope's data.
func baselineDo[T any](ctx context.Context, bl *baseline, method, path string, in any, idempotent bool) (*T, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, bl.baseURL+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", bl.auth)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", bl.userAgent)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idempotent {
		key, err := uuid.NewRandom()
		if err != nil {
			return nil, err
		}
		req.Header.Set("Idempotency-Key", key.String())
	}
	resp, err := bl.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, raw)
	}
	var env baselineEnvelope[T]
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, err
	}
	if !env.Success {
		return nil, fmt.Errorf("%s (stan %s)", env.Message, env.Stan)
	}
	return &env.Data, nil
}

// The baseline's own request and resource types: what a hand-written client
// would declare, with decimal amounts.
type (
	baselineIdentification struct {
		Type   string `json:"identification_type,omitempty"`
		Number string `json:"identification_number,omitempty"`
		Image  string `json:"identification_image,omitempty"`
	}
	baselinePaymentDetails struct {
		AccountNumber string `json:"account_number,omitempty"`
		BankCode      string `json:"bank_code,omitempty"`
		BankName      string `json:"bank_name,omitempty"`
		RoutingNumber string `json:"routing_number,omitempty"`
		SwiftCode     string `json:"swift_code,omitempty"`
		PaymentRails  string `json:"payment_rails,omitempty"`
	}
	baselineRecipientCreate struct {
		AccountNumber      string                  `json:"account_number"`
		AccountName        string                  `json:"account_name"`
		AccountType        string                  `json:"account_type"`
		AccountCurrency    string                  `json:"account_currency"`
		AccountCountryCode string                  `json:"account_country_code,omitempty"`
		AccountBankName    string                  `json:"account_bank_name,omitempty"`
		AccountBankCode    string                  `json:"account_bank_code,omitempty"`
		Identification     *baselineIdentification `json:"identification,omitempty"`
		PaymentDetails     *baselinePaymentDetails `json:"payment_details,omitempty"`
		AmountLimit        json.Number             `json:"amount_limit,omitempty"`
	}
	baselineRecipientUpdate struct {
		AccountName string      `json:"account_name,omitempty"`
		AmountLimit json.Number `json:"amount_limit,omitempty"`
	}
	baselineRecipient struct {
		ID                 string                  `json:"id"`
		MerchantID         string                  `json:"merchant_id"`
		AccountNumber      string                  `json:"account_number"`
		AccountName        string                  `json:"account_name"`
		AccountType        string                  `json:"account_type"`
		IsInternalAccount  bool                    `json:"is_internal_account"`
		AccountCurrency    string                  `json:"account_currency"`
		AccountBankName    string                  `json:"account_bank_name"`
		AccountBankCode    string                  `json:"account_bank_code"`
		AccountCountryCode string                  `json:"account_country_code"`
		AccountCountry     string                  `json:"account_country"`
		Identification     *baselineIdentification `json:"identification,omitempty"`
		Limit              *decimal.Decimal        `json:"limit,omitempty"`
		PaymentDetails     *baselinePaymentDetails `json:"payment_details,omitempty"`
		CreatedAt          time.Time               `json:"created_at"`
		UpdatedAt          time.Time               `json:"updated_at"`
	}
	baselineInitiate struct {
		Amount      json.Number `json:"amount"`
		Currency    string      `json:"currency"`
		RecipientID string      `json:"recipient_id"`
		Description string      `json:"description,omitempty"`
		Reference   string      `json:"reference"`
		Channel     string      `json:"channel,omitempty"`
	}
	baselineConfirm struct {
		Reference string `json:"reference"`
		QuoteID   string `json:"quote_id"`
	}
	baselinePayment    = benchbaseline.Payment
	baselineVAMetadata struct {
		BusinessRegNumber string `json:"business_reg_number,omitempty"`
		Country           string `json:"country,omitempty"`
		UseCase           string `json:"use_case,omitempty"`
		Reference         string `json:"reference,omitempty"`
	}
	baselineVACreate struct {
		AccountType  string              `json:"account_type"`
		AccountName  string              `json:"account_name"`
		Email        string              `json:"email"`
		FirstName    string              `json:"first_name,omitempty"`
		LastName     string              `json:"last_name,omitempty"`
		DisplayName  string              `json:"display_name,omitempty"`
		BVN          string              `json:"bvn,omitempty"`
		MobileNumber string              `json:"mobile_number,omitempty"`
		Metadata     *baselineVAMetadata `json:"metadata,omitempty"`
	}
	baselineEvent struct {
		ID        string          `json:"id"`
		Event     string          `json:"event"`
		CreatedAt time.Time       `json:"created_at"`
		Data      json.RawMessage `json:"data"`
	}
	baselineEventPage struct {
		Events  []baselineEvent `json:"events"`
		HasMore bool            `json:"has_more"`
	}
	baselineVirtualAccount struct {
		ID            string    `json:"id"`
		Currency      string    `json:"currency"`
		AccountNumber string    `json:"account_number"`
		AccountName   string    `json:"account_name"`
		BankName      string    `json:"bank_name"`
		IsActive      bool      `json:"is_active"`
		CreatedAt     time.Time `json:"created_at"`
	}
)

// The baseline's operations. Like the SDK's, each builds its wire params from
// the caller's typed params.
func (bl *baseline) createRecipient(ctx context.Context, p *payments.RecipientCreateParams) (*baselineRecipient, error) {
	in := baselineRecipientCreate{
		AccountNumber: string(p.AccountNumber), AccountName: p.AccountName, AccountType: string(p.AccountType),
		AccountCurrency: p.AccountCurrency, AccountCountryCode: p.AccountCountryCode,
		AccountBankName: p.AccountBankName, AccountBankCode: p.AccountBankCode,
	}
	if p.AmountLimit != nil {
		in.AmountLimit = json.Number(p.AmountLimit.String())
	}
	if id := p.Identification; id != nil {
		in.Identification = &baselineIdentification{Type: string(id.Type), Number: string(id.Number), Image: string(id.Image)}
	}
	if pd := p.PaymentDetails; pd != nil {
		in.PaymentDetails = &baselinePaymentDetails{AccountNumber: string(pd.AccountNumber), BankCode: pd.BankCode,
			BankName: pd.BankName, RoutingNumber: pd.RoutingNumber, SwiftCode: pd.SwiftCode, PaymentRails: pd.PaymentRails}
	}
	return baselineDo[baselineRecipient](ctx, bl, http.MethodPost, "/payments/recipients", &in, true)
}

func (bl *baseline) updateRecipient(ctx context.Context, id string, p *payments.RecipientUpdateParams) (*baselineRecipient, error) {
	in := baselineRecipientUpdate{AccountName: p.AccountName}
	if p.AmountLimit != nil {
		in.AmountLimit = json.Number(p.AmountLimit.String())
	}
	return baselineDo[baselineRecipient](ctx, bl, http.MethodPut, "/payments/recipients/"+id, &in, false)
}

func (bl *baseline) initiate(ctx context.Context, p *payments.PaymentInitiateParams) (*baselinePayment, error) {
	in := baselineInitiate{
		Amount: json.Number(p.Amount.String()), Currency: p.Currency, RecipientID: p.RecipientID,
		Description: p.Description, Reference: p.Reference, Channel: p.Channel,
	}
	return baselineDo[baselinePayment](ctx, bl, http.MethodPost, "/payments/initiate", &in, true)
}

func (bl *baseline) confirm(ctx context.Context, p *payments.PaymentConfirmParams) (*baselinePayment, error) {
	in := baselineConfirm{Reference: p.Reference, QuoteID: p.QuoteID}
	return baselineDo[baselinePayment](ctx, bl, http.MethodPost, "/payments/confirm", &in, true)
}

func (bl *baseline) createVirtualAccount(ctx context.Context, p *payments.VirtualAccountCreateParams) (*baselineVirtualAccount, error) {
	in := baselineVACreate{
		AccountType: string(p.AccountType), AccountName: p.AccountName, Email: string(p.Email),
		FirstName: p.FirstName, LastName: p.LastName, DisplayName: p.DisplayName,
		BVN: string(p.BVN), MobileNumber: string(p.MobileNumber),
	}
	if m := p.Metadata; m != nil {
		in.Metadata = (*baselineVAMetadata)(m)
	}
	return baselineDo[baselineVirtualAccount](ctx, bl, http.MethodPost, "/accounts/virtual-accounts", &in, false)
}

func (bl *baseline) trigger(ctx context.Context, event payments.EventType) (*json.RawMessage, error) {
	return baselineDo[json.RawMessage](ctx, bl, http.MethodPost, "/webhooks/events/trigger/"+string(event), nil, false)
}

func (bl *baseline) listEvents(ctx context.Context, p *payments.EventListParams) (*baselineEventPage, error) {
	q := url.Values{}
	if p.After != "" {
		q.Set("after", p.After)
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	path := "/webhooks/events"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return baselineDo[baselineEventPage](ctx, bl, http.MethodGet, path, nil, false)
}
