package paymentstest

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	payments "github.com/paymentsapi/payments-go"
	"github.com/shopspring/decimal"
)

// Server is a running fake of the Payments API. Make one with NewServer (or
// StartServer) and Close it when done. All its methods are safe for
// concurrent use.
type Server struct {
	url        string
	apiKey     string
	apiKeyHash [32]byte
	merchantID string
	rates      map[[2]string]decimal.Decimal
	logger     *slog.Logger

	ids     ids
	clock   *clock
	faults  faultQueue
	idem    idempotency
	hooks   *dispatcher
	reqs    requestLog
	latency atomic.Int64
	admin   bool          // withAdminAPI
	delay   time.Duration // Sandbox.ProcessingDelay
	later   later
	dash    *dashboard // withDashboard; nil without it
	// differences are WithDifferences' (differences.go); nil without it.
	differences differences

	writeTimeout time.Duration // of withHTTPTimeouts; 0: none

	http      *http.Server
	listener  net.Listener
	served    chan struct{} // closed when Serve has returned
	connMu    sync.Mutex
	conns     map[net.Conn]http.ConnState
	done      chan struct{} // closed when Close starts
	closeOnce sync.Once
	transport *http.Transport // of the clients that Client makes

	mu sync.Mutex // guards st
	st state
}

// defaultReadHeaderTimeout is the server's ReadHeaderTimeout unless
// withHTTPTimeouts sets one.
const defaultReadHeaderTimeout = 10 * time.Second

// NewServer starts a fake on a random loopback port, like
// httptest.NewServer. It panics if the server cannot start (an invalid
// option, or no port to listen on); use StartServer to get an error instead.
func NewServer(opts ...Option) *Server {
	s, err := StartServer(opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// StartServer starts a fake and returns it, or the error that kept it from
// starting.
func StartServer(opts ...Option) (*Server, error) {
	cfg := config{
		addr:           "127.0.0.1:0",
		now:            time.Now,
		webhookRetries: doublingWaits(defaultWebhookRetryWait),
		webhookTimeout: defaultWebhookTimeout,
		webhookScheme:  SchemePayments,
		logLimit:       defaultLogLimit,

		processingDelay: defaultProcessingDelay,
		balance:         decimal.RequireFromString(defaultBalance),
		balanceLow:      decimal.RequireFromString(defaultBalanceLowThreshold),
	}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	secrets, err := schemeSecrets(cfg.webhookScheme, cfg.webhookSecrets)
	if err != nil {
		return nil, errors.New("paymentstest: " + err.Error())
	}
	cfg.webhookSecrets = secrets
	s := &Server{
		clock:  &clock{base: cfg.now},
		logger: cfg.logger,
		rates:  cfg.rates,
		admin:  cfg.admin,
		served: make(chan struct{}),
		done:   make(chan struct{}),
	}
	s.merchantID = s.ids.uuid()
	s.apiKey = cfg.apiKey
	if s.apiKey == "" {
		key, err := newAPIKey(s.merchantID, s.clock.now())
		if err != nil {
			return nil, err
		}
		s.apiKey = key
	}
	s.apiKeyHash = sha256.Sum256([]byte(s.apiKey))
	s.st.init()
	s.st.money = balances{start: cfg.balance, threshold: cfg.balanceLow}
	s.delay = cfg.processingDelay
	s.differences = cfg.differences
	if cfg.dashboard {
		if s.dash, err = newDashboard(cfg.dashboardRemote); err != nil {
			return nil, fmt.Errorf("paymentstest: starting the dashboard: %w", err)
		}
	}
	s.reqs.entries = newRing[RequestRecord](cfg.logLimit)

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("paymentstest: listening on %s: %w", cfg.addr, err)
	}
	s.url = "http://" + dialableAddr(ln.Addr())
	s.hooks = newDispatcher(&cfg, s.clock.now, s.logger)
	s.later.hold, s.later.release = s.hooks.hold, s.hooks.release
	s.transport = &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
	s.listener = ln
	s.conns = make(map[net.Conn]http.ConnState)
	s.writeTimeout = cfg.timeouts.Write
	s.http = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: cmp.Or(cfg.timeouts.ReadHeader, defaultReadHeaderTimeout),
		ReadTimeout:       cfg.timeouts.Read,
		WriteTimeout:      cfg.timeouts.Write,
		IdleTimeout:       cfg.timeouts.Idle,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState:         s.trackConn,
	}
	go func() {
		defer close(s.served)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// dialableAddr turns a listening address into one a client can dial: an
// unspecified host (0.0.0.0, ::) becomes 127.0.0.1.
func dialableAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(tcp.Port))
}

// newAPIKey makes a random key shaped like a JWT (header.payload.signature),
// as the specification's bearer tokens are. Nothing checks its contents.
func newAPIKey(merchantID string, now time.Time) (string, error) {
	sig := make([]byte, 32)
	if _, err := rand.Read(sig); err != nil {
		return "", fmt.Errorf("paymentstest: making an API key: %w", err)
	}
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	claims, err := json.Marshal(map[string]any{"sub": merchantID, "env": "sandbox", "iat": now.Unix()})
	if err != nil {
		return "", err
	}
	return header + "." + enc.EncodeToString(claims) + "." + enc.EncodeToString(sig), nil
}

// URL returns the server's base URL, such as "http://127.0.0.1:41234": pass
// it to payments.WithBaseURL.
func (s *Server) URL() string { return s.url }

// APIKey returns the bearer key the server accepts.
func (s *Server) APIKey() string { return s.apiKey }

// merchantIDValue returns the id of the merchant that owns everything created on
// this server (the merchant_id of recipients).
func (s *Server) merchantIDValue() string { return s.merchantID }

// newClient returns an SDK client wired to the server: its URL and key, an
// HTTP transport that Close shuts down, and retry waits of 1 to 20
// milliseconds so that tests of retries run fast. opts are applied after
// these and override them.
func (s *Server) newClient(opts ...payments.Option) (*payments.Client, error) {
	hc := &http.Client{
		Transport: s.transport,
		Timeout:   30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	base := []payments.Option{
		payments.WithBaseURL(s.url),
		payments.WithHTTPClient(hc),
		payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 20 * time.Millisecond}),
	}
	return payments.NewClient(s.apiKey, append(base, opts...)...)
}

// Client returns a client wired to the server (its URL and API key, fast
// retries), with opts after those. It panics when opts are invalid, which
// is a bug in the calling test.
func (s *Server) Client(opts ...payments.Option) *payments.Client {
	c, err := s.newClient(opts...)
	if err != nil {
		panic(err)
	}
	return c
}

// Close stops the server: it stops accepting requests, ends requests waiting
// on a Fault's Latency, waits for those being handled, stops webhook delivery
// (deliveries not yet done stay pending in the log) and closes idle
// connections of the clients Client made. No goroutine of the server
// outlives Close. Calling Close again does nothing.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.later.close() // before the dispatcher: late work may still send events
		s.hooks.close()
		_ = s.listener.Close()
		<-s.served // every accepted connection is now tracked
		// Like httptest: connections that are idle, or that never sent a
		// request (a client's spare dial), are closed at once; Shutdown
		// would wait 5 seconds for the latter.
		s.closeConns(http.StateNew, http.StateIdle)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.http.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
			_ = s.http.Close()
		}
		s.transport.CloseIdleConnections()
	})
}

func (s *Server) trackConn(c net.Conn, st http.ConnState) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	switch st {
	case http.StateHijacked, http.StateClosed:
		delete(s.conns, c)
	default:
		s.conns[c] = st
	}
}

func (s *Server) closeConns(states ...http.ConnState) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	for c, st := range s.conns {
		for _, want := range states {
			if st == want {
				_ = c.Close()
				delete(s.conns, c)
			}
		}
	}
}

// extendWrite moves the write deadline of a request that is about to wait
// d on purpose, so that withHTTPTimeouts' Write counts from the end of the
// wait. Without a Write timeout, or when w cannot take a deadline (a server
// of your own), it does nothing.
func (s *Server) extendWrite(w http.ResponseWriter, d time.Duration) {
	if s.writeTimeout <= 0 || d <= 0 || w == nil {
		return
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d + s.writeTimeout))
}

// closed reports whether Close has started.
func (s *Server) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// errClosed is returned by the server's methods that need it running.
var errClosed = errors.New("paymentstest: server closed")
