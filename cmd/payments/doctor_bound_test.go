package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doctorDoc decodes doctor's --json document, and its rows by Topic.
func doctorDoc(t *testing.T, stdout string) (doctorJSON, map[string]*row) {
	t.Helper()
	var doc doctorJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	rows := map[string]*row{}
	for _, r := range doc.Rows {
		rows[r.Topic] = r
	}
	return doc, rows
}

// TestDoctorBoundedAgainstASlowService: a service that sends its headers
// and then one byte every 2 s (slow-loris). doctor ends within --timeout,
// after one request (it stops probing once the base URL gives no answer),
// every row it probes "could not check", none "differs"; exit 1, saying
// why it stopped.
func TestDoctorBoundedAgainstASlowService(t *testing.T) {
	var requests atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for i := 0; i < 60; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(2 * time.Second):
			}
			_, _ = w.Write([]byte(" "))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(slow.Close)
	started := time.Now()
	code, stdout, stderr := runCLI(t, map[string]string{envAPIKey: "k", envBaseURL: slow.URL}, "doctor", "--json", "--timeout", "3s")
	assert.Less(t, time.Since(started), time.Minute, "well before 21 requests of 30 s")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "doctor: stopped early (--timeout 3s ran out)")
	assert.Equal(t, int32(1), requests.Load(), "nothing more is sent once the base URL gave no answer")
	doc, rows := doctorDoc(t, stdout)
	assert.Equal(t, "--timeout 3s ran out", doc.Stopped)
	for _, r := range doc.Rows {
		assert.Equal(t, unchecked, r.Result, "%s: %s", r.Topic, r.Detail)
	}
	assert.Contains(t, rows["Base URL"].Detail, "no answer at "+slow.URL)
	assert.Contains(t, rows["Identifiers"].Detail, "not reached: doctor stopped (--timeout 3s ran out)")
}

// TestDoctorStopsWhenTheBaseURLIsDown: a connection refused on the first
// probe: nothing more is sent, nothing differs, exit 1.
func TestDoctorStopsWhenTheBaseURLIsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	code, stdout, stderr := runCLI(t, map[string]string{envAPIKey: "k", envBaseURL: down}, "doctor", "--json")
	assert.Equal(t, exitFailure, code, stderr)
	doc, _ := doctorDoc(t, stdout)
	assert.Contains(t, doc.Stopped, "GET /webhooks/events got no answer")
	for _, r := range doc.Rows {
		assert.NotEqual(t, differs, r.Result, "%s: %s", r.Topic, r.Detail)
	}

	// As text, each row printed as decided says why it was not checked.
	code, stdout, _ = runCLI(t, map[string]string{envAPIKey: "k", envBaseURL: down}, "doctor")
	assert.Equal(t, exitFailure, code)
	assert.NotContains(t, stdout, "                   \n", "a row without its reason")
	assert.Contains(t, stdout, "could not check  Identifiers\n                   not reached: doctor stopped (GET /webhooks/events got no answer: ")
	assert.Contains(t, stdout, "\ndoctor stopped early: GET /webhooks/events got no answer: ")
}

// TestDoctorStopsAtTheFirstDroppedConnection: the first request's
// connection is dropped without an answer, and the service would answer
// every later one: doctor sends nothing more.
func TestDoctorStopsAtTheFirstDroppedConnection(t *testing.T) {
	f := startFake(t, adminAPI())
	var dropped atomic.Bool
	rec := newRecorder(t, f.URL(), func(w http.ResponseWriter, r *http.Request) bool {
		if dropped.Swap(true) {
			return false
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return true
	})
	var out syncBuffer
	code, stderr := runDoctorVia(minute(t), t, rec, f.with(envBaseURL, "http://127.0.0.1:1"), &out, "--json")
	assert.Equal(t, exitFailure, code, stderr)
	assert.Equal(t, []string{"GET /webhooks/events"}, rec.seen(), "nothing after the request that got no answer")
	doc, _ := doctorDoc(t, out.String())
	assert.Contains(t, doc.Stopped, "GET /webhooks/events got no answer")
	for _, r := range doc.Rows {
		assert.NotEqual(t, differs, r.Result, "%s: %s", r.Topic, r.Detail)
	}
}

// TestDoctorStopsWhenAProbeHangs: the service answers the reads, then
// holds the first create until --timeout: doctor stops there, marks what
// it did not reach "could not check" (the create that got no answer never
// "differs", as Identifiers did), and still puts the webhook URL back.
func TestDoctorStopsWhenAProbeHangs(t *testing.T) {
	f := startFake(t, adminAPI())
	before := f.webhookURL(t)
	rec := newRecorder(t, f.URL(), func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && r.URL.Path == "/payments/recipients" {
			_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the client go
			<-r.Context().Done()
			return true
		}
		return false
	})
	var out syncBuffer
	code, stderr := runDoctorVia(minute(t), t, rec, f.with(envBaseURL, "http://127.0.0.1:1"), &out, "--json", "--timeout", "6s")
	assert.Equal(t, exitFailure, code, stderr)
	doc, rows := doctorDoc(t, out.String())
	assert.Equal(t, "--timeout 6s ran out", doc.Stopped)
	assert.Equal(t, holds, rows["Base URL"].Result)
	for _, r := range doc.Rows {
		assert.NotEqual(t, differs, r.Result, "%s: %s", r.Topic, r.Detail)
	}
	assert.Equal(t, unchecked, rows["Identifiers"].Result)
	assert.Equal(t, 1, len(rec.matching("POST /payments/")), "nothing after the create that hung: %v", rec.seen())
	assert.Equal(t, before, f.webhookURL(t), "the webhook URL is put back")
}

// TestDoctorPrintsRowsAsDecided: a row is printed once decided, before
// doctor goes on: the service holds the first create until "Base URL" is
// on stdout.
func TestDoctorPrintsRowsAsDecided(t *testing.T) {
	f := startFake(t, adminAPI())
	var out syncBuffer
	var printedFirst atomic.Bool
	rec := newRecorder(t, f.URL(), func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && r.URL.Path == "/payments/recipients" && !printedFirst.Load() {
			ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
			defer cancel()
			for !strings.Contains(out.String(), "holds            Base URL\n") && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
			}
			printedFirst.Store(strings.Contains(out.String(), "holds            Base URL\n"))
		}
		return false
	})
	code, stderr := runDoctorVia(minute(t), t, rec, f.with(envBaseURL, "http://127.0.0.1:1", envWebhookSecret, sinkSecret), &out)
	assert.Equal(t, exitOK, code, stderr)
	assert.True(t, printedFirst.Load(), "the Base URL row was printed before the first create was answered")
	assert.Regexp(t, `\n\d+ hold, 0 differ, \d+ could not be checked\.\n$`, out.String())
	assert.Equal(t, 1, strings.Count(out.String(), "  Base URL\n"), "each row once")
}
