package payments_test

// Benchmarks of every operation against a hand-written baseline: the same
// request made with net/http and encoding/json alone, against the same local
// server answering the same bytes. Run them, and compare with benchstat, as
// BENCHMARKS.md says.

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

const (
	benchKey         = "sk_test_bench_4Hq9Zx2Lm7Rt"
	benchRecipientID = "3f2b6c1e-8d4a-4c1b-9a7e-2f0d5b8c9e11"
	benchQuoteID     = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9"
	benchStan        = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
)

// The canned answers: the envelope around a realistic resource.
var (
	benchRecipientBody = []byte(`{"success":true,"message":"Recipient created","stan":"` + benchStan + `","data":{` +
		`"id":"` + benchRecipientID + `","merchant_id":"0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d",` +
		`"account_number":"0123456789","account_name":"Ada Okafor","account_type":"individual",` +
		`"is_internal_account":false,"account_currency":"NGN","account_bank_name":"First Bank",` +
		`"account_bank_code":"011","account_country_code":"NG","account_country":"Nigeria",` +
		`"identification":{"identification_type":"passport"},"limit":"250000.00",` +
		`"payment_details":{"swift_code":"FBNINGLA"},` +
		`"created_at":"2025-03-01T10:00:00Z","updated_at":"2025-03-01T10:05:00Z"}}`)

	benchInitiateBody = []byte(`{"success":true,"message":"Payment initiated","stan":"` + benchStan + `","data":{` +
		`"id":"9d7f4a2b-1c3e-4f5a-8b6c-7d8e9f0a1b2c","reference":"order-1042","status":"pending",` +
		`"amount":"15000.50","currency":"NGN","description":"Invoice 1042","type":"transfer",` +
		`"sub_type":"domestic","category":"payout","transaction_date":"2025-03-01T10:00:00Z",` +
		`"tags":"invoice,march","is_reversed":false,"is_completed":false,"channel":"api","notes":"",` +
		`"created_at":"2025-03-01T10:00:00Z","updated_at":"2025-03-01T10:00:00Z",` +
		`"quote":{"quote_id":"` + benchQuoteID + `","amount":"15000.50","fee":"25.00","exchange_rate":"1",` +
		`"total_amount":"15025.50","currency":"NGN","expires_at":"2025-03-01T10:05:00Z"}}}`)

	benchConfirmBody = []byte(`{"success":true,"message":"Payment confirmed","stan":"` + benchStan + `","data":{` +
		`"id":"9d7f4a2b-1c3e-4f5a-8b6c-7d8e9f0a1b2c","reference":"order-1042","status":"completed",` +
		`"amount":"15000.50","currency":"NGN","description":"Invoice 1042","type":"transfer",` +
		`"sub_type":"domestic","category":"payout","transaction_date":"2025-03-01T10:00:00Z",` +
		`"tags":"invoice,march","is_reversed":false,"is_completed":true,"channel":"api","notes":"",` +
		`"created_at":"2025-03-01T10:00:00Z","updated_at":"2025-03-01T10:01:00Z"}}`)

	benchVirtualAccountBody = []byte(`{"success":true,"message":"Virtual account created","stan":"` + benchStan + `","data":{` +
		`"id":"c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f","currency":"NGN","account_number":"9900112233",` +
		`"account_name":"Acme Stores","bank_name":"Wema Bank","is_active":true,` +
		`"created_at":"2025-03-01T10:00:00Z"}}`)

	// A page of 10 payment.completed events (ListEventsPage), has_more set.
	benchEventsBody = benchEventPage(10)

	benchTriggerBody = []byte(`{"success":true,"message":"Test event queued","stan":"` + benchStan + `",` +
		`"data":{"event":"payment.completed","queued":true}}`)
)

// benchEventPage is the answer of GET /webhooks/events: n payment.completed
// events, each with a payment as its data, and has_more.
func benchEventPage(n int) []byte {
	b := []byte(`{"success":true,"message":"Events retrieved","stan":"` + benchStan + `","data":{"events":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		id := fmt.Sprintf("evt_%04d", i+1)
		b = append(b, `{"id":"`+id+`","event":"payment.completed","created_at":"2025-03-01T10:01:00Z","data":{`+
			`"id":"9d7f4a2b-1c3e-4f5a-8b6c-7d8e9f0a1b2c","reference":"order-1042","status":"completed",`+
			`"amount":"15000.50","currency":"NGN","description":"Invoice 1042","type":"transfer",`+
			`"is_reversed":false,"is_completed":true,"channel":"api",`+
			`"created_at":"2025-03-01T10:00:00Z","updated_at":"2025-03-01T10:01:00Z"}}`...)
	}
	return append(b, `],"has_more":true}}`...)
}

// benchEventParams asks for the page after an event, 10 events.
func benchEventParams() *payments.EventListParams {
	return &payments.EventListParams{After: "evt_0000", Limit: 10}
}

// The params of each operation. Every benchmark sends the same request from
// the SDK and from the baseline.
func benchRecipientCreateParams() *payments.RecipientCreateParams {
	limit := payments.Amount{Decimal: decimal.RequireFromString("250000.00")}
	return &payments.RecipientCreateParams{
		AccountNumber:      "0123456789",
		AccountName:        "Ada Okafor",
		AccountType:        payments.AccountTypeIndividual,
		AccountCurrency:    "NGN",
		AccountCountryCode: "NG",
		AccountBankName:    "First Bank",
		AccountBankCode:    "011",
		AmountLimit:        &limit,
		Identification:     &payments.Identification{Type: payments.IdentificationPassport, Number: "A01234567"},
		PaymentDetails:     &payments.PaymentDetails{SwiftCode: "FBNINGLA"},
	}
}

func benchRecipientUpdateParams() *payments.RecipientUpdateParams {
	// The limit the answer (benchRecipientBody) has: an answer with another
	// is an error (recipientAgrees).
	limit := payments.Amount{Decimal: decimal.RequireFromString("250000.00")}
	return &payments.RecipientUpdateParams{AccountName: "Ada N. Okafor", AmountLimit: &limit}
}

func benchInitiateParams() *payments.PaymentInitiateParams {
	return &payments.PaymentInitiateParams{
		Amount:      payments.Amount{Decimal: decimal.RequireFromString("15000.50")},
		Currency:    "NGN",
		RecipientID: benchRecipientID,
		Reference:   "order-1042",
		Description: "Invoice 1042",
		Channel:     "api",
	}
}

func benchConfirmParams() *payments.PaymentConfirmParams {
	return &payments.PaymentConfirmParams{Reference: "order-1042", QuoteID: benchQuoteID}
}

func benchVirtualAccountParams() *payments.VirtualAccountCreateParams {
	return &payments.VirtualAccountCreateParams{
		AccountType:  payments.AccountTypeIndividual,
		AccountName:  "Acme Stores",
		Email:        "ada@example.com",
		FirstName:    "Ada",
		LastName:     "Okafor",
		BVN:          "12345678901",
		MobileNumber: "+2348012345678",
		Metadata:     &payments.VirtualAccountMetadata{Country: "NG", Reference: "cust-77"},
	}
}

// newBenchServer starts a server that answers every request with status and
// body, after reading the request body: no other work per request, so that
// the client's cost makes the difference between two benchmarks.
func newBenchServer(tb testing.TB, status int, body []byte) *httptest.Server {
	srv := httptest.NewUnstartedServer(benchHandler(status, body))
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv
}

func benchHandler(status int, body []byte) http.HandlerFunc {
	contentType := []string{"application/json"}
	contentLength := []string{strconv.Itoa(len(body))}
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h["Content-Type"] = contentType
		h["Content-Length"] = contentLength
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

func newBenchSDK(tb testing.TB, baseURL string) *payments.Client {
	tb.Helper()
	// The default transport: no WithHTTPClient.
	c, err := payments.NewClient(benchKey, payments.WithBaseURL(baseURL))
	require.NoError(tb, err)
	return c
}

// benchOp is one operation done by the SDK and by the baseline.
type benchOp struct {
	status   int
	body     []byte
	sdk      func(ctx context.Context, c *payments.Client) error
	baseline func(ctx context.Context, bl *baseline) error
}

func benchOps() map[string]benchOp {
	var (
		rcp = benchRecipientCreateParams()
		rup = benchRecipientUpdateParams()
		pip = benchInitiateParams()
		pcp = benchConfirmParams()
		vap = benchVirtualAccountParams()
		elp = benchEventParams()
	)
	return map[string]benchOp{
		"RecipientsCreate": {201, benchRecipientBody,
			func(ctx context.Context, c *payments.Client) error {
				_, err := c.Recipients.Create(ctx, rcp)
				return err
			},
			func(ctx context.Context, bl *baseline) error { _, err := bl.createRecipient(ctx, rcp); return err }},
		"RecipientsUpdate": {200, benchRecipientBody,
			func(ctx context.Context, c *payments.Client) error {
				_, err := c.Recipients.Update(ctx, benchRecipientID, rup)
				return err
			},
			func(ctx context.Context, bl *baseline) error {
				_, err := bl.updateRecipient(ctx, benchRecipientID, rup)
				return err
			}},
		"PaymentsInitiate": {200, benchInitiateBody,
			func(ctx context.Context, c *payments.Client) error {
				_, err := c.Payments.Initiate(ctx, pip)
				return err
			},
			func(ctx context.Context, bl *baseline) error { _, err := bl.initiate(ctx, pip); return err }},
		"PaymentsConfirm": {200, benchConfirmBody,
			func(ctx context.Context, c *payments.Client) error {
				_, err := c.Payments.Confirm(ctx, pcp)
				return err
			},
			func(ctx context.Context, bl *baseline) error { _, err := bl.confirm(ctx, pcp); return err }},
		"VirtualAccountsCreate": {200, benchVirtualAccountBody,
			func(ctx context.Context, c *payments.Client) error {
				_, err := c.VirtualAccounts.Create(ctx, vap)
				return err
			},
			func(ctx context.Context, bl *baseline) error { _, err := bl.createVirtualAccount(ctx, vap); return err }},
		"WebhooksListEventsPage": {200, benchEventsBody,
			func(ctx context.Context, c *payments.Client) error {
				_, err := c.Webhooks.ListEventsPage(ctx, elp)
				return err
			},
			func(ctx context.Context, bl *baseline) error { _, err := bl.listEvents(ctx, elp); return err }},
		"WebhooksTrigger": {200, benchTriggerBody,
			func(ctx context.Context, c *payments.Client) error {
				_, err := c.Webhooks.Trigger(ctx, payments.EventPaymentCompleted)
				return err
			},
			func(ctx context.Context, bl *baseline) error {
				_, err := bl.trigger(ctx, payments.EventPaymentCompleted)
				return err
			}},
	}
}

// runBenchOp measures one operation: impl=sdk, then impl=baseline, against
// one server. benchstat pairs them with -col /impl.
func runBenchOp(b *testing.B, name string) {
	op := benchOps()[name]
	srv := newBenchServer(b, op.status, op.body)
	ctx := context.Background()
	runImpls(b, func(b *testing.B) {
		c := newBenchSDK(b, srv.URL)
		benchLoop(b, func() error { return op.sdk(ctx, c) })
	}, func(b *testing.B) {
		bl := newBaseline(srv.URL)
		defer bl.hc.CloseIdleConnections()
		benchLoop(b, func() error { return op.baseline(ctx, bl) })
	})
}

// runImpls runs impl=sdk, then impl=baseline; with the environment
// variable PAYMENTS_BENCH_BASELINE_FIRST=1, the baseline first. What runs
// second in a process finds its heap grown and the server warm: interleaved
// rounds alternate the order (BENCHMARKS.md, "Time per call, second round").
func runImpls(b *testing.B, sdk, baseline func(*testing.B)) {
	if os.Getenv("PAYMENTS_BENCH_BASELINE_FIRST") == "1" {
		b.Run("impl=baseline", baseline)
		b.Run("impl=sdk", sdk)
		return
	}
	b.Run("impl=sdk", sdk)
	b.Run("impl=baseline", baseline)
}

// benchLoop runs do b.N times and reports, besides time and allocations,
// the process's CPU time per operation (cpu-ns/op: client and server
// together, garbage collection included), which a noisy shared machine
// disturbs far less than wall time.
func benchLoop(b *testing.B, do func() error) {
	b.ReportAllocs()
	cpu0, ok := processCPUTime()
	for b.Loop() {
		if err := do(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0, ok)
}

func reportCPU(b *testing.B, cpu0 time.Duration, ok bool) {
	if cpu1, ok1 := processCPUTime(); ok && ok1 && b.N > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkRecipientsCreate(b *testing.B)       { runBenchOp(b, "RecipientsCreate") }
func BenchmarkRecipientsUpdate(b *testing.B)       { runBenchOp(b, "RecipientsUpdate") }
func BenchmarkPaymentsInitiate(b *testing.B)       { runBenchOp(b, "PaymentsInitiate") }
func BenchmarkPaymentsConfirm(b *testing.B)        { runBenchOp(b, "PaymentsConfirm") }
func BenchmarkVirtualAccountsCreate(b *testing.B)  { runBenchOp(b, "VirtualAccountsCreate") }
func BenchmarkWebhooksTrigger(b *testing.B)        { runBenchOp(b, "WebhooksTrigger") }
func BenchmarkWebhooksListEventsPage(b *testing.B) { runBenchOp(b, "WebhooksListEventsPage") }

// parallelGoroutines is how many goroutines the parallel benchmark runs.
const parallelGoroutines = 64

// BenchmarkParallelInitiate runs Payments.Initiate from 64 goroutines through
// one Client with the default transport, and reports how many TCP
// connections the server accepted after warm-up (new-conns): with an idle
// pool large enough for 64 callers it is 0. The baseline does the same with
// its own client, for the time ratio under concurrency.
func BenchmarkParallelInitiate(b *testing.B) {
	params := benchInitiateParams()
	runImpls(b, func(b *testing.B) {
		runParallelBench(b, func(url string) func(context.Context) error {
			c := newBenchSDK(b, url)
			return func(ctx context.Context) error { _, err := c.Payments.Initiate(ctx, params); return err }
		})
	}, func(b *testing.B) {
		runParallelBench(b, func(url string) func(context.Context) error {
			bl := newBaseline(url)
			b.Cleanup(bl.hc.CloseIdleConnections)
			return func(ctx context.Context) error { _, err := bl.initiate(ctx, params); return err }
		})
	})
}

// BenchmarkParallelOps runs every operation of the sequential benchmarks
// from 64 goroutines through one Client (and the baseline through its own
// client), each against a server that answers as that operation's does.
func BenchmarkParallelOps(b *testing.B) {
	ops := benchOps()
	for _, name := range slices.Sorted(maps.Keys(ops)) {
		op := ops[name]
		b.Run(name, func(b *testing.B) {
			runImpls(b, func(b *testing.B) {
				runParallelBenchOn(b, op.status, op.body, func(url string) func(context.Context) error {
					c := newBenchSDK(b, url)
					return func(ctx context.Context) error { return op.sdk(ctx, c) }
				})
			}, func(b *testing.B) {
				runParallelBenchOn(b, op.status, op.body, func(url string) func(context.Context) error {
					bl := newBaseline(url)
					b.Cleanup(bl.hc.CloseIdleConnections)
					return func(ctx context.Context) error { return op.baseline(ctx, bl) }
				})
			})
		})
	}
}

func runParallelBench(b *testing.B, setup func(url string) func(context.Context) error) {
	runParallelBenchOn(b, http.StatusOK, benchInitiateBody, setup)
}

// runParallelBenchOn runs setup's call from 64 goroutines against a server
// that answers status and body.
func runParallelBenchOn(b *testing.B, status int, body []byte, setup func(url string) func(context.Context) error) {
	perProc := (parallelGoroutines + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
	goroutines := perProc * runtime.GOMAXPROCS(0)

	// The server counts accepted connections and, during the first warm-up
	// round, holds each request until all goroutines have one in flight, so
	// that the pool is filled to the benchmark's concurrency.
	var (
		newConns atomic.Int64
		gate     atomic.Pointer[sync.WaitGroup]
	)
	answer := benchHandler(status, body)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wg := gate.Load(); wg != nil {
			wg.Done()
			wg.Wait()
		}
		answer(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	do := setup(srv.URL)
	ctx := context.Background()

	warmUp := func(callsEach int) {
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range callsEach {
					if err := do(ctx); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	barrier := new(sync.WaitGroup)
	barrier.Add(goroutines)
	gate.Store(barrier)
	warmUp(1)
	gate.Store(nil)
	warmUp(20)

	newConns.Store(0)
	b.SetParallelism(perProc)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, ok := processCPUTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := do(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	reportCPU(b, cpu0, ok)
	b.ReportMetric(float64(newConns.Load()), "new-conns")
}

// TestBenchBaselineMatchesSDK checks that each benchmark's baseline sends
// what the SDK sends (method, path, header names, JSON body) and decodes the
// same answer, so that the comparison is fair. It measures nothing.
func TestBenchBaselineMatchesSDK(t *testing.T) {
	type seen struct {
		method, path, query string
		header              http.Header
		body                []byte
	}
	for name, op := range benchOps() {
		t.Run(name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				last seen
			)
			answer := benchHandler(op.status, op.body)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				last = seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body}
				mu.Unlock()
				answer(w, r)
			}))
			defer srv.Close()
			ctx := context.Background()

			require.NoError(t, op.sdk(ctx, newBenchSDK(t, srv.URL)))
			fromSDK := last
			bl := newBaseline(srv.URL)
			defer bl.hc.CloseIdleConnections()
			require.NoError(t, op.baseline(ctx, bl))
			fromBaseline := last

			assert.Equal(t, fromSDK.method, fromBaseline.method)
			assert.Equal(t, fromSDK.path, fromBaseline.path)
			assert.Equal(t, fromSDK.query, fromBaseline.query)
			assert.Equal(t, headerNames(fromSDK.header), headerNames(fromBaseline.header))
			for _, h := range []string{"Authorization", "User-Agent", "Accept", "Content-Type"} {
				assert.Equal(t, fromSDK.header.Get(h), fromBaseline.header.Get(h), h)
			}
			if len(fromSDK.body) > 0 {
				assert.JSONEq(t, string(fromSDK.body), string(fromBaseline.body))
			} else {
				assert.Empty(t, fromBaseline.body)
			}
		})
	}
}

// BenchmarkCallsUnderFailures makes calls from 16 goroutines through one
// Client while 1 call in 10 fails with 503 on every attempt, and reports how
// many connections the server accepted (new-conns): failed calls must not
// empty the pool that the others share.
func BenchmarkCallsUnderFailures(b *testing.B) {
	b.ReportAllocs()
	b.ReportMetric(float64(poolRun(b, b.N, 10)), "new-conns")
}
