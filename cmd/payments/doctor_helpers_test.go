package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recorder is a server in front of the fake that records every request it
// receives ("METHOD /path", the admin API's included, in order) and passes
// it on, unless hook answers it (hook returns true).
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	got  []string
	hook func(w http.ResponseWriter, r *http.Request) bool
	// modify, when set, may change the fake's answers on their way back.
	modify func(*http.Response) error
}

func newRecorder(t *testing.T, target string, hook func(http.ResponseWriter, *http.Request) bool) *recorder {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	rec := &recorder{hook: hook}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if rec.modify != nil {
			return rec.modify(resp)
		}
		return nil
	}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.got = append(rec.got, r.Method+" "+r.URL.Path)
		rec.mu.Unlock()
		if rec.hook != nil && rec.hook(w, r) {
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// seen is every request received, in order.
func (rec *recorder) seen() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.got...)
}

// writes is every request received that is not a GET.
func (rec *recorder) writes() []string {
	var out []string
	for _, s := range rec.seen() {
		if !strings.HasPrefix(s, "GET ") {
			out = append(out, s)
		}
	}
	return out
}

// matching is every request received that starts with prefix.
func (rec *recorder) matching(prefix string) []string {
	var out []string
	for _, s := range rec.seen() {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// index is the position of the first request received that starts with
// prefix, or -1.
func (rec *recorder) index(prefix string) int {
	for i, s := range rec.seen() {
		if strings.HasPrefix(s, prefix) {
			return i
		}
	}
	return -1
}

// runDoctorVia runs payments doctor args with env until ctx ends, its
// requests carried to rec whatever host the base URL names, as a merchant's
// network would carry them to that host.
func runDoctorVia(ctx context.Context, t *testing.T, rec *recorder, env map[string]string, stdout *syncBuffer, args ...string) (code int, stderr string) {
	t.Helper()
	addr := rec.Listener.Addr().String()
	transport := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	defer transport.CloseIdleConnections()
	var errOut strings.Builder
	c := &cli{stdout: stdout, stderr: &errOut, getenv: func(k string) string { return env[k] }, transport: transport}
	code = c.run(ctx, append([]string{"doctor"}, args...))
	return code, errOut.String()
}

// syncBuffer is a stdout a test reads while doctor writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// minute is the context of one doctor run in a test: doctor's own bound is
// far below it.
func minute(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
