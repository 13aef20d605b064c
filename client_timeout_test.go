package payments_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// The timeout tests run real HTTP/1.1 over loopback against servers that
// misbehave at the TCP level, through the Client's default transport: what a
// merchant gets when the service (or a proxy in front of it) hangs.

const (
	toDeadline = 300 * time.Millisecond
	// toMargin is generous on purpose: it is the only timing assertion, and
	// must hold on a loaded 2-core machine under -race (1 s was once missed
	// by 0.02 s at a load of 12). The misbehaving servers trickle until the
	// test stops them, so a client that ignored its deadline would still
	// take far longer than this and fail.
	toMargin  = 10 * time.Second
	toTrickle = 50 * time.Millisecond
)

// misbehaviour answers one request on w. It returns when stop is closed or
// writing fails, and reports whether the connection may carry another request.
type misbehaviour func(w *bufio.Writer, stop <-chan struct{}) bool

// rawServer is a loopback TCP server that reads HTTP/1.1 requests, records
// when each arrived, and answers with a misbehaviour.
type rawServer struct {
	ln   net.Listener
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once

	mu       sync.Mutex
	closed   bool
	conns    map[net.Conn]bool
	arrivals []time.Time
}

func startRawServer(t *testing.T, answer misbehaviour) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &rawServer{ln: ln, stop: make(chan struct{}), conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.acceptLoop(answer)
	t.Cleanup(s.close)
	return s
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() }

func (s *rawServer) acceptLoop(answer misbehaviour) {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return
		}
		s.conns[conn] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(conn, answer)
	}
}

func (s *rawServer) serve(conn net.Conn, answer misbehaviour) {
	defer s.wg.Done()
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		s.mu.Lock()
		s.arrivals = append(s.arrivals, time.Now())
		s.mu.Unlock()
		if !answer(bufio.NewWriter(conn), s.stop) {
			return
		}
	}
}

// close stops every misbehaviour, closes the listener and every connection,
// and waits for the server's goroutines to end.
func (s *rawServer) close() {
	s.once.Do(func() {
		close(s.stop)
		s.ln.Close()
		s.mu.Lock()
		s.closed = true
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
}

// requestArrivals stops the server and returns when each request arrived.
func (s *rawServer) requestArrivals() []time.Time {
	s.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.arrivals...)
}

// neverAnswer reads the request and then says nothing until the test ends.
func neverAnswer(_ *bufio.Writer, stop <-chan struct{}) bool {
	<-stop
	return false
}

// trickle writes head at once, then one byte of filler every toTrickle for
// ever, flushing each.
func trickle(head string, filler byte) misbehaviour {
	return func(w *bufio.Writer, stop <-chan struct{}) bool {
		if _, err := w.WriteString(head); err != nil || w.Flush() != nil {
			return false
		}
		tick := time.NewTicker(toTrickle)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return false
			case <-tick.C:
				if w.WriteByte(filler) != nil || w.Flush() != nil {
					return false
				}
			}
		}
	}
}

// trickleBody sends a complete header block announcing a 1 MiB JSON body,
// then the start of an envelope, then one byte at a time.
func trickleBody(status int) misbehaviour {
	return trickle(fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"+
		`{"success":true,"message":"`, status, http.StatusText(status), 1<<20), 'a')
}

// answerNow sends a complete response and keeps the connection open.
func answerNow(status int, header, body string) misbehaviour {
	return func(w *bufio.Writer, _ <-chan struct{}) bool {
		fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s",
			status, http.StatusText(status), header, len(body), body)
		return w.Flush() == nil
	}
}

// inTurn answers the n-th request with the n-th misbehaviour, then keeps
// using the last.
func inTurn(answers ...misbehaviour) misbehaviour {
	var mu sync.Mutex
	n := 0
	return func(w *bufio.Writer, stop <-chan struct{}) bool {
		mu.Lock()
		a := answers[min(n, len(answers)-1)]
		n++
		mu.Unlock()
		return a(w, stop)
	}
}

// timedInitiate runs a retryable Initiate against url with a toDeadline
// context and returns when the call started, its deadline and its error.
func timedInitiate(t *testing.T, url string, opts ...payments.Option) (start, deadline time.Time, err error) {
	t.Helper()
	c, cerr := payments.NewClient(harnessKey, append([]payments.Option{
		payments.WithBaseURL(url),
		payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: 10 * time.Millisecond}),
		payments.WithRetries(payments.RetryPolicy{MaxAttempts: 6}),
	}, opts...)...)
	require.NoError(t, cerr)
	ctx, cancel := context.WithTimeout(context.Background(), toDeadline)
	defer cancel()
	deadline, _ = ctx.Deadline()
	start = time.Now()
	p, err := c.Payments.Initiate(ctx, validInitiateParams())
	assert.Nil(t, p)
	elapsed := time.Since(start)
	assert.Less(t, elapsed, toDeadline+toMargin, "the call outlived its deadline by more than the margin")
	return start, deadline, err
}

// assertArrivedBefore checks that the server saw want requests, all of them
// before the deadline: no attempt was started once the deadline had passed.
func assertArrivedBefore(t *testing.T, s *rawServer, deadline time.Time, want int) {
	t.Helper()
	arrivals := s.requestArrivals()
	assert.Len(t, arrivals, want, "requests the server received")
	for i, at := range arrivals {
		assert.True(t, at.Before(deadline), "request %d arrived %s after the deadline", i+1, at.Sub(deadline))
	}
}

func TestTimeoutServerNeverAnswers(t *testing.T) {
	checkNoGoroutineLeft(t)
	srv := startRawServer(t, neverAnswer)

	_, deadline, err := timedInitiate(t, srv.url())

	require.ErrorIs(t, err, context.DeadlineExceeded)
	var terr *payments.TransportError
	require.ErrorAs(t, err, &terr, "no response at all is a transport error")
	assert.Equal(t, "/payments/initiate", terr.Path)
	assert.Equal(t, 1, terr.Attempts)
	key, ok := payments.IdempotencyKeyOf(err)
	assert.True(t, ok && key != "", "the key is reported so the call can be retried safely")
	assertArrivedBefore(t, srv, deadline, 1)
}

func TestTimeoutServerTrickles(t *testing.T) {
	if testing.Short() {
		t.Skip("a timing test of a trickling server; skipped with -short")
	}
	const (
		transport = "transport" // no usable response: *TransportError
		malformed = "malformed" // a 2xx whose body did not arrive: *MalformedResponseError
		api       = "api"       // an error status whose body did not arrive: *APIError
	)
	cases := []struct {
		name     string
		answer   misbehaviour
		want     string
		attempts int
	}{
		{"headers one byte at a time", trickle("HTTP/1.1 200 OK\r\nX-Slow: ", 'a'), transport, 1},
		{"body of a 200 one byte at a time", trickleBody(http.StatusOK), malformed, 1},
		{"body of a 201 one byte at a time", trickleBody(http.StatusCreated), malformed, 1},
		// A retryable status: the retry layer drains the body before waiting,
		// and the deadline ends both the drain and the wait.
		{"body of a 503 one byte at a time", trickleBody(http.StatusServiceUnavailable), transport, 1},
		// Not retryable: the status is known, the body is not.
		{"body of a 422 one byte at a time", trickleBody(http.StatusUnprocessableEntity), api, 1},
		{"503 at once, then a trickled 200", inTurn(answerNow(503, "", `{"success":false}`), trickleBody(http.StatusOK)), malformed, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkNoGoroutineLeft(t)
			srv := startRawServer(t, tc.answer)

			_, deadline, err := timedInitiate(t, srv.url())

			require.Error(t, err)
			assert.ErrorIs(t, err, context.DeadlineExceeded, "%v", err)
			var (
				terr   *payments.TransportError
				merr   *payments.MalformedResponseError
				apiErr *payments.APIError
			)
			assert.Equal(t, tc.want == transport, errors.As(err, &terr), "%T %v", err, err)
			assert.Equal(t, tc.want == malformed, errors.As(err, &merr), "%T %v", err, err)
			assert.Equal(t, tc.want == api, errors.As(err, &apiErr), "%T %v", err, err)
			switch tc.want {
			case transport:
				assert.Equal(t, tc.attempts, terr.Attempts)
			case malformed:
				require.NotNil(t, merr.Response)
				assert.Equal(t, tc.attempts, merr.Response.Attempts)
				assert.ErrorIs(t, err, payments.ErrMalformedResponse)
			case api:
				assert.Equal(t, http.StatusUnprocessableEntity, apiErr.StatusCode)
				assert.ErrorIs(t, err, payments.ErrUnprocessable, "the status still matches its sentinel")
				assert.Contains(t, apiErr.Error(), "reading the body failed", "the message says the body was cut, not that it was not JSON")
				assert.Equal(t, tc.attempts, apiErr.Attempts)
			}
			key, ok := payments.IdempotencyKeyOf(err)
			assert.True(t, ok && key != "", "the key is reported so the call can be retried safely")
			assertArrivedBefore(t, srv, deadline, tc.attempts)
		})
	}
}

// TestTimeoutShorterThanRetryAfter complements TestRetryAfterIsHonoured: here
// the first retry is quick and it is the second wait, asked for by a 429's
// Retry-After (seconds or an HTTP date) that reaches past the deadline, that
// the deadline cuts short. No third attempt starts.
func TestTimeoutShorterThanRetryAfter(t *testing.T) {
	for name, retryAfter := range map[string]func() string{
		"seconds":   func() string { return "2" },
		"HTTP date": func() string { return time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat) },
	} {
		t.Run(name, func(t *testing.T) {
			checkNoGoroutineLeft(t)
			busy := `{"success":false,"message":"slow down"}`
			rateLimited := func(w *bufio.Writer, stop <-chan struct{}) bool {
				return answerNow(http.StatusTooManyRequests, "Retry-After: "+retryAfter()+"\r\n", busy)(w, stop)
			}
			srv := startRawServer(t, inTurn(answerNow(http.StatusBadGateway, "", busy), rateLimited,
				answerNow(http.StatusOK, "", okEnvelope(paymentJSON))))

			// The client would honour a Retry-After of up to a minute.
			start, deadline, err := timedInitiate(t, srv.url(), payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: time.Minute}))

			assert.Less(t, time.Since(start), 2*time.Second, "the wait ends with the context, not with Retry-After")
			require.ErrorIs(t, err, context.DeadlineExceeded)
			var terr *payments.TransportError
			require.ErrorAs(t, err, &terr)
			assert.Equal(t, 2, terr.Attempts)
			assertArrivedBefore(t, srv, deadline, 2)
		})
	}
}

// checkNoGoroutineLeft fails the test if a goroutine of net/http, of the
// network poller or of this package, started during the test, is still
// running once the test's other cleanups (which stop the servers) are done.
// Call it first, so that its cleanup runs last.
func checkNoGoroutineLeft(t *testing.T) {
	t.Helper()
	before := goroutineStacks()
	t.Cleanup(func() {
		var leaked []string
		for wait := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			leaked = leaked[:0]
			for id, stack := range goroutineStacks() {
				if _, old := before[id]; !old && (strings.Contains(stack, "net/http.") ||
					strings.Contains(stack, "net.(*") || strings.Contains(stack, "payments-go")) {
					leaked = append(leaked, stack)
				}
			}
			if len(leaked) == 0 || time.Now().After(wait) {
				break
			}
		}
		if len(leaked) > 0 {
			t.Errorf("%d goroutine(s) left running:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
		}
	})
}

// goroutineStacks returns the stack of every goroutine by its id.
func goroutineStacks() map[string]string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	stacks := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		// "goroutine 42 [select]:\n..."
		if f := strings.Fields(g); len(f) > 1 && f[0] == "goroutine" {
			stacks[f[1]] = g
		}
	}
	return stacks
}
