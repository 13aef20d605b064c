package paymentstest

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"slices"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/shopspring/decimal"
)

// The fake's own tests reach its internals through these names; they are
// not part of the package's API (issue 35: a small fake).

const (
	AdminPrefix                = adminPrefix
	BankName                   = sandboxBankName
	CodeNotSettleable          = codeNotSettleable
	DashboardPath              = dashboardPath
	DefaultBalance             = defaultBalance
	DefaultBalanceLowThreshold = defaultBalanceLowThreshold
	DefaultLogLimit            = defaultLogLimit
	MaxDeliveryDelay           = maxDeliveryDelay
	MaxWebhookRetries          = maxWebhookRetries
	MaxWebhookRetryWait        = maxWebhookRetryWait
	ResponseBodyLimit          = responseBodyLimit
	WebhookRetries             = webhookRetryCount
)

var (
	ErrClosed           = errClosed
	ErrNoWebhookURL     = errNoWebhookURL
	ErrUnknownEvent     = errUnknownEvent
	ErrUnknownEventKind = errUnknownEventKind
	ErrUnknownResource  = errUnknownResource
)

type (
	DeliveryChaos = deliveryChaos
	HTTPTimeouts  = httpTimeouts
)

func WithAddr(addr string) Option                      { return withAddr(addr) }
func WithAdminAPI() Option                             { return withAdminAPI() }
func WithBalanceLowThreshold(d decimal.Decimal) Option { return withBalanceLowThreshold(d) }
func WithClock(now func() time.Time) Option            { return withClock(now) }
func WithDashboard() Option                            { return withDashboard() }
func WithDashboardRemote() Option                      { return withDashboardRemote() }
func WithDeliveryChaos(c DeliveryChaos) Option         { return withDeliveryChaos(c) }
func WithExchangeRate(from, to string, rate decimal.Decimal) Option {
	return withExchangeRate(from, to, rate)
}
func WithHTTPTimeouts(t HTTPTimeouts) Option         { return withHTTPTimeouts(t) }
func WithLogLimit(n int) Option                      { return withLogLimit(n) }
func WithLogger(l *slog.Logger) Option               { return withLogger(l) }
func WithWebhookConcurrency(n int) Option            { return withWebhookConcurrency(n) }
func WithWebhookRetryWait(base time.Duration) Option { return withWebhookRetryWait(base) }
func WithWebhookTimeout(d time.Duration) Option      { return withWebhookTimeout(d) }

// DashboardActions are the names of the dashboard's actions (POST
// DashboardPath+"actions/NAME").
func DashboardActions() []string { return slices.Sorted(maps.Keys(dashboardActions)) }

func (s *Server) DashboardURL() string                   { return s.dashboardURL() }
func (s *Server) PauseDeliveries()                       { s.pauseDeliveries() }
func (s *Server) ResumeDeliveries()                      { s.resumeDeliveries() }
func (s *Server) DeliveriesPaused() bool                 { return s.deliveriesPaused() }
func (s *Server) SetDeliveryChaos(c DeliveryChaos) error { return s.setDeliveryChaos(c) }
func (s *Server) DeliveryChaosSetting() DeliveryChaos    { return s.deliveryChaosSetting() }
func (s *Server) FailNext(n, status int, retryAfter time.Duration) {
	s.failNext(n, status, retryAfter)
}
func (s *Server) DropNext(n int)                                   { s.dropNext(n) }
func (s *Server) DropNextAfterWork(n int)                          { s.dropNextAfterWork(n) }
func (s *Server) FaultsInjected() int                              { return s.faultsInjected() }
func (s *Server) PendingFaults() int                               { return s.pendingFaults() }
func (s *Server) SetLatency(d time.Duration)                       { s.setLatency(d) }
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.serveHTTP(w, r) }
func (s *Server) MerchantID() string                               { return s.merchantIDValue() }
func (s *Server) NewClient(opts ...payments.Option) (*payments.Client, error) {
	return s.newClient(opts...)
}
func (s *Server) SetWebhookRetries(waits ...time.Duration) error {
	return s.setWebhookRetries(waits...)
}
func (s *Server) WebhookRetryWaits() []time.Duration           { return s.webhookRetryWaits() }
func (s *Server) Redeliver(id string) (Delivery, error)        { return s.redeliverEvent(id) }
func (s *Server) RedeliverTo(id, url string) (Delivery, error) { return s.redeliverTo(id, url) }
func (s *Server) RedeliverFailed() ([]string, error)           { return s.redeliverFailed() }
func (s *Server) TriggerEvent(kind payments.EventType, resourceID string) (Event, error) {
	return s.triggerTestEvent(kind, resourceID)
}
func (s *Server) SetWebhookScheme(scheme WebhookScheme, secrets ...string) error {
	return s.setWebhookScheme(scheme, secrets...)
}
func (s *Server) WebhookScheme() WebhookScheme { return s.webhookSchemeValue() }
func (s *Server) SetWebhook(url string, secrets ...string) error {
	return s.setWebhook(url, secrets...)
}
func (s *Server) SetWebhookURL(url string) error             { return s.setWebhookURL(url) }
func (s *Server) WebhookURL() string                         { return s.webhookURLValue() }
func (s *Server) WebhookSecrets() []string                   { return s.currentWebhookSecrets() }
func (s *Server) Recipients() []payments.Recipient           { return s.recipientsAll() }
func (s *Server) VirtualAccounts() []payments.VirtualAccount { return s.virtualAccountsAll() }
func (s *Server) VirtualAccount(id string) (payments.VirtualAccount, bool) {
	return s.virtualAccountByID(id)
}
func (s *Server) IncomingPayments() []IncomingPayment { return s.incomingPaymentsAll() }

// RandomFaults is the old SetRandomFaults' setting, kept for the chaos tests:
// SetRandomFaults injects each of Faults with a Rate chosen so that each is
// drawn with chance Rate/len(Faults) and one of them with chance Rate.
type RandomFaults struct {
	Rate   float64
	Faults []Fault
	Seed   uint64
}

func (s *Server) SetRandomFaults(rf RandomFaults) error {
	if math.IsNaN(rf.Rate) || rf.Rate < 0 || rf.Rate > 1 {
		return fmt.Errorf("paymentstest: RandomFaults.Rate must be from 0 to 1, not %v", rf.Rate)
	}
	if rf.Rate > 0 && len(rf.Faults) == 0 {
		return errors.New("paymentstest: RandomFaults with a positive Rate needs Faults")
	}
	for _, f := range rf.Faults {
		if err := checkFault(&f); err != nil {
			return err
		}
	}
	s.faults.mu.Lock()
	s.faults.random = nil
	s.faults.mu.Unlock()
	if rf.Rate == 0 {
		return nil
	}
	share := rf.Rate / float64(len(rf.Faults))
	for i, f := range rf.Faults {
		f.Rate = math.Min(1, share/(1-float64(i)*share))
		f.Seed = rf.Seed + uint64(i)
		if err := s.InjectFault(f); err != nil {
			return err
		}
	}
	return nil
}

func WithProcessingDelay(d time.Duration) Option { return withProcessingDelay(d) }
