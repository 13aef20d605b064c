package main

import (
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
