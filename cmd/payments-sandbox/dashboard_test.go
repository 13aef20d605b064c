package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

var dashboardLine = regexp.MustCompile(`(?m)^Dashboard: (http://\S+) `)

func TestRunPrintsAndServesTheDashboard(t *testing.T) {
	baseURL, _, stdout, _ := startRun(t, "-webhook-url", "none")
	m := dashboardLine.FindStringSubmatch(stdout.String())
	require.NotNil(t, m, "stdout: %s", stdout.String())
	assert.Equal(t, baseURL+"/_dashboard/", m[1])
	assert.NotContains(t, stdout.String(), "WARNING")
	resp, err := http.Get(m[1])
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "payments sandbox")
}

func TestRunDashboardSaysWhenItIsOpenToOthers(t *testing.T) {
	_, _, stdout, _ := startRun(t, "-webhook-url", "none", "-dashboard-remote")
	assert.Contains(t, stdout.String(), "WARNING: -dashboard-remote")

	_, _, stdout, _ = startRun(t, "-webhook-url", "none", "-addr", "0.0.0.0:0")
	assert.Contains(t, stdout.String(), "the dashboard answers this machine only")

	baseURL, _, stdout, _ := startRun(t, "-webhook-url", "none", "-dashboard=false")
	assert.NotContains(t, stdout.String(), "Dashboard:")
	resp, err := http.Get(baseURL + "/_dashboard/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "an API path like any other")
}

// The note that the dashboard answers this machine only comes when the
// API listens beyond it: every interface, or another address.
func TestPrintDashboardNotesAnAddressBeyondThisMachine(t *testing.T) {
	const dash = "http://127.0.0.1:8765/_dashboard/"
	const note = "Note: the API listens on %s, but the dashboard answers this machine only (-dashboard-remote opens it).\n"
	for _, tc := range []struct {
		addr string
		note bool
	}{
		{"127.0.0.1:8080", false},
		{"127.0.0.2:8080", false},
		{"localhost:8080", false},
		{"LOCALHOST:8080", false},
		{"[::1]:8080", false},
		{":8080", true},
		{"0.0.0.0:8080", true},
		{"[::]:8080", true},
		{"192.168.1.10:8080", true},
		{"sandbox.internal:8080", true},
	} {
		var out strings.Builder
		printDashboard(&out, dash, tc.addr, false, deliveryFlags{})
		want := "Dashboard: " + dash + " (payments open prints it again)\n"
		if tc.note {
			want += fmt.Sprintf(note, tc.addr)
		}
		assert.Equal(t, want+"\n", out.String(), tc.addr)
	}
}

func TestRunDeliverTwice(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	rc := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := payments.ParseEvent(body)
		if err == nil {
			mu.Lock()
			ids = append(ids, ev.ID)
			mu.Unlock()
		}
	}))
	defer rc.Close()
	baseURL, apiKey, stdout, _ := startRun(t, "-webhook-url", rc.URL, "-deliver-twice")
	assert.Contains(t, stdout.String(), "twice: true")
	client, err := payments.NewClient(apiKey, payments.WithBaseURL(baseURL))
	require.NoError(t, err)
	defer client.Close()
	sandboxRecipient(t, client)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ids) == 4
	}, 10*time.Second, 5*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	counts := map[string]int{}
	for _, id := range ids {
		counts[id]++
	}
	assert.Len(t, counts, 2, "two events, each twice: %s", strings.Join(ids, " "))
	for _, n := range counts {
		assert.Equal(t, 2, n)
	}
}
