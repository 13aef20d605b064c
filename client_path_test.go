package payments_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// pathFiles records the files of the module on the stack wherever it is
// asked to look.
type pathFiles struct {
	mu    sync.Mutex
	root  string
	files map[string]bool
}

func (p *pathFiles) look() {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		f, more := frames.Next()
		if rel, err := filepath.Rel(p.root, f.File); err == nil && !strings.HasPrefix(rel, "..") && !strings.HasSuffix(rel, "_test.go") {
			p.files[filepath.ToSlash(rel)] = true
		}
		if !more {
			return
		}
	}
}

// lookingBody is a response body that looks at the stack on every Read and
// on Close: the way back.
type lookingBody struct {
	io.Reader
	p *pathFiles
}

func (b lookingBody) Read(buf []byte) (int, error) { b.p.look(); return b.Reader.Read(buf) }
func (b lookingBody) Close() error                 { b.p.look(); return nil }

// TestInitiatePathFiles keeps internal/request's doc comment true: the files
// of the module that a Payments.Initiate goes through, out and back, are
// those it names, at most six. The files are read from the stack at every
// point where the call reaches outside code: the round trip (a fake
// transport), the clock and the waits (a fake clock, a rate limit that
// makes the retry wait), and the reading and closing of each answer's
// body. The call's first attempt gets a 503 and its retry the payment.
func TestInitiatePathFiles(t *testing.T) {
	root, err := os.Getwd()
	require.NoError(t, err)
	p := &pathFiles{root: root, files: map[string]bool{}}
	var sent int
	rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		p.look()
		if req.Body != nil {
			_, _ = io.Copy(io.Discard, req.Body)
		}
		sent++
		status, body := http.StatusServiceUnavailable, []byte(`{"success":false,"message":"busy"}`)
		if sent > 1 {
			status, body = http.StatusOK, benchInitiateBody
		}
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: lookingBody{bytes.NewReader(body), p}, ContentLength: int64(len(body)), Request: req}, nil
	})
	c, err := payments.NewClient(benchKey, payments.WithBaseURL("https://api.example.com"),
		payments.WithHTTPClient(&http.Client{Transport: rt}), payments.WithRetries(payments.RetryPolicy{WaitMin: time.Millisecond, WaitMax: time.Millisecond}),
		payments.WithRateLimit(1, 1))
	require.NoError(t, err)
	start := time.Now()
	payments.SetClockForTest(c, func() time.Time { p.look(); return start })
	payments.SetSleepForTest(c, func(context.Context, time.Duration) error { p.look(); return nil })

	pay, err := c.Payments.Initiate(context.Background(), benchInitiateParams())
	require.NoError(t, err)
	require.Equal(t, 2, pay.LastResponse().Attempts)

	src, err := os.ReadFile(filepath.Join("internal", "request", "request.go"))
	require.NoError(t, err)
	var named []string
	for _, m := range regexp.MustCompile(`(?m)^//  \d\. (\S+\.go):`).FindAllSubmatch(src, -1) {
		named = append(named, string(m[1]))
	}
	require.NotEmpty(t, named, "internal/request's doc comment names the path's files")
	assert.LessOrEqual(t, len(named), 6, "the path crosses at most six files")
	var seen []string
	for f := range p.files {
		seen = append(seen, f)
	}
	slices.Sort(seen)
	for _, f := range seen {
		assert.Contains(t, named, f, "the path went through %s, which internal/request's doc comment does not name", f)
	}
	for _, f := range []string{"payments.go", "client.go", "internal/request/request.go", "internal/request/wait.go", "envelope.go"} {
		assert.Contains(t, seen, f, "the path was seen in %s: the test still looks everywhere it should", f)
	}
	t.Logf("files seen on the path: %v", seen)
}
