package paymentstest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// page is one answer of the dashboard.
type page struct {
	status int
	header http.Header
	body   string
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func dashGet(t *testing.T, u string, header map[string]string) page {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) page {
	t.Helper()
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return page{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

var tokenPattern = regexp.MustCompile(`name="token" value="([0-9a-f]+)"`)

func tokenOf(t *testing.T, p page) string {
	t.Helper()
	m := tokenPattern.FindStringSubmatch(p.body)
	require.NotNil(t, m, "the page has a token")
	return m[1]
}

// dashPost posts a dashboard form; header adds or overrides headers.
func dashPost(t *testing.T, srv *paymentstest.Server, action string, form url.Values, header map[string]string) page {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.DashboardURL()+"actions/"+action, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return do(t, req)
}

// dashServer starts a fake with the dashboard and a receiver, and makes a
// recipient, a payment, a virtual account and money received.
func dashServer(t *testing.T, opts ...paymentstest.Option) (*paymentstest.Server, *payments.Client, *receiver) {
	t.Helper()
	rc := newReceiver(t, nil)
	srv, c := start(t, append(append(fastHooks(rc.URL), paymentstest.WithDashboard()), opts...)...)
	r := createRecipient(t, c, "")
	initiate(t, c, r.ID, "50", "order-dash-1")
	va, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	_, err = srv.SimulateIncomingPayment(string(va.AccountNumber), dec("5000"), "")
	require.NoError(t, err)
	waitDeliveries(t, srv)
	return srv, c, rc
}

func TestDashboardOffByDefault(t *testing.T) {
	srv, _ := start(t)
	assert.Empty(t, srv.DashboardURL())
	p := dashGet(t, srv.URL()+paymentstest.DashboardPath, nil)
	assert.Equal(t, http.StatusUnauthorized, p.status, "an API path like any other")
}

func TestDashboardShowsState(t *testing.T) {
	srv, _, _ := dashServer(t)
	require.Equal(t, srv.URL()+"/_dashboard/", srv.DashboardURL())
	root := dashGet(t, srv.URL()+"/", nil)
	assert.Equal(t, http.StatusSeeOther, root.status)
	assert.Equal(t, paymentstest.DashboardPath, root.header.Get("Location"))

	p := dashGet(t, srv.DashboardURL(), nil)
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, "Ada Lovelace")
	assert.Contains(t, p.body, "••••6789", "account numbers masked")
	assert.Contains(t, p.body, "order-dash-1")
	assert.Contains(t, p.body, "payment.initiated")
	assert.Contains(t, p.body, "received 5000.00 NGN")
	for _, ev := range srv.Events() {
		assert.Contains(t, p.body, ev.ID)
	}
	assert.Equal(t, len(srv.Events()), strings.Count(p.body, `class="attempt ok"`), "one attempt, 200, per event")
	assert.Contains(t, p.body, "HTTP 200")

	live := dashGet(t, srv.DashboardURL(), map[string]string{"X-Dashboard-Live": "1"})
	assert.NotContains(t, live.body, "<html", "only the live part")
	assert.Contains(t, live.body, "order-dash-1")

	filtered := dashGet(t, srv.DashboardURL()+"?kind=payment.initiated", nil)
	assert.Equal(t, 1, strings.Count(filtered.body, `class="event"`))
	r := srv.Recipients()[0]
	byResource := dashGet(t, srv.DashboardURL()+"?resource="+r.ID, nil)
	assert.Equal(t, 3, strings.Count(byResource.body, `class="event"`), "recipient.created, recipient.verified and the payment to it")
}

func TestDashboardEscapes(t *testing.T) {
	const xss = `<img src=x onerror=alert(1)>`
	srv, c := start(t, paymentstest.WithDashboard())
	params := recipientParams()
	params.AccountName = xss
	_, err := c.Recipients.Create(ctx(t), params)
	require.NoError(t, err)
	p := dashGet(t, srv.DashboardURL()+"?resource="+url.QueryEscape(xss), nil)
	assert.NotContains(t, p.body, xss)
	assert.Contains(t, p.body, "&lt;img src=x onerror=alert(1)&gt;")
}

func TestDashboardHeadersForbidInlineScript(t *testing.T) {
	srv, _, _ := dashServer(t)
	p := dashGet(t, srv.DashboardURL(), nil)
	csp := p.header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "script-src 'self'")
	assert.NotContains(t, csp, "unsafe-inline")
	assert.Equal(t, "nosniff", p.header.Get("X-Content-Type-Options"))
	assert.Equal(t, "DENY", p.header.Get("X-Frame-Options"))
	assert.NotRegexp(t, `<script>|<script [^>]*>[^<]|\son[a-z]+=|style=`, p.body, "no inline script, handler or style")
}

func TestDashboardPagesHoldNoSecret(t *testing.T) {
	srv, _, _ := dashServer(t)
	secrets := append([]string{srv.APIKey(), "0123456789"}, srv.WebhookSecrets()...)
	for _, dl := range srv.Deliveries() {
		for _, a := range dl.Attempts {
			_, mac, _ := strings.Cut(a.Signature, "v1=")
			require.NotEmpty(t, mac)
			secrets = append(secrets, mac)
		}
	}
	for _, va := range srv.VirtualAccounts() {
		secrets = append(secrets, string(va.AccountNumber))
	}
	main := dashGet(t, srv.DashboardURL(), nil)
	pages := []page{main, dashGet(t, srv.DashboardURL(), map[string]string{"X-Dashboard-Live": "1"})}
	for _, m := range regexp.MustCompile(`(?:href|src|action)="([^"]+)"`).FindAllStringSubmatch(main.body, -1) {
		u, err := url.Parse(m[1])
		require.NoError(t, err)
		pages = append(pages, dashGet(t, srv.URL()+u.Path+"?"+u.RawQuery, nil))
	}
	require.Greater(t, len(pages), 4)
	for _, p := range pages {
		for _, s := range secrets {
			assert.NotContains(t, p.body, s)
		}
	}
}

func TestDashboardRefusesCrossSiteActions(t *testing.T) {
	srv, _, rc := dashServer(t)
	token := tokenOf(t, dashGet(t, srv.DashboardURL(), nil))
	ev := srv.Events()[0]
	form := url.Values{"token": {token}, "event": {ev.ID}}
	for name, h := range map[string]map[string]string{
		"another origin":        {"Origin": "http://evil.example"},
		"a cross-site fetch":    {"Sec-Fetch-Site": "cross-site"},
		"another host's origin": {"Origin": "http://localhost:1"},
		"an opaque origin":      {"Origin": "null"},
	} {
		p := dashPost(t, srv, "redeliver", form, h)
		assert.Equal(t, http.StatusForbidden, p.status, name)
	}
	for name, f := range map[string]url.Values{
		"no token":    {"event": {ev.ID}},
		"wrong token": {"token": {strings.Repeat("0", len(token))}, "event": {ev.ID}},
	} {
		p := dashPost(t, srv, "redeliver", f, nil)
		assert.Equal(t, http.StatusForbidden, p.status, name)
	}
	get := dashGet(t, srv.DashboardURL()+"actions/redeliver?token="+token+"&event="+ev.ID, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, get.status)
	waitDeliveries(t, srv)
	assert.Len(t, srv.Deliveries(), len(srv.Events()), "nothing redelivered")
	assert.Len(t, rc.deliveries(), len(srv.Events()))

	ok := dashPost(t, srv, "redeliver", form, map[string]string{"Origin": "", "Sec-Fetch-Site": ""})
	assert.Equal(t, http.StatusSeeOther, ok.status, "a same-origin form without those headers")
}

func TestDashboardAnswersOnlyThisMachine(t *testing.T) {
	srv, _ := start(t, paymentstest.WithDashboard())
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+paymentstest.DashboardPath, nil)
	req.RemoteAddr = "192.0.2.7:5555"
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	assert.Equal(t, http.StatusForbidden, w.Code, "another machine")

	req2, err := http.NewRequest(http.MethodGet, srv.DashboardURL(), nil)
	require.NoError(t, err)
	req2.Host = "evil.example"
	p := do(t, req2)
	assert.Equal(t, http.StatusForbidden, p.status, "a DNS-rebound name")

	open, _ := start(t, paymentstest.WithDashboardRemote())
	w = httptest.NewRecorder()
	open.ServeHTTP(w, req)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), "Open to other machines")
}

// The dashboard answers a client on this machine that names this machine in
// its Host header (internal/loopback decides both), and refuses the rest:
// another client, or a name a DNS rebinding page could send.
func TestDashboardAnswersOnlyLoopbackClientsAndHosts(t *testing.T) {
	srv, _ := start(t, paymentstest.WithDashboard())
	const (
		otherMachine = "the dashboard answers only this machine (Sandbox.DashboardRemote, or payments-sandbox -dashboard-remote, opens it to others)\n"
		otherName    = "the dashboard answers only requests for localhost or a loopback address\n"
	)
	for _, tc := range []struct {
		remoteAddr, host string
		refusal          string // "" when answered
	}{
		{"127.0.0.1:5555", "127.0.0.1:8080", ""},
		{"127.0.0.2:5555", "127.0.0.1:8080", ""},
		{"[::1]:5555", "[::1]:8080", ""},
		{"127.0.0.1:5555", "[::1]", ""}, // an IPv6 literal without a port
		{"127.0.0.1:5555", "localhost", ""},
		{"127.0.0.1:5555", "LOCALHOST:8080", ""},
		{"127.0.0.1:5555", "127.0.0.2", ""},
		{"192.0.2.7:5555", "127.0.0.1:8080", otherMachine},
		{"0.0.0.0:5555", "127.0.0.1:8080", otherMachine},
		{"[fe80::1%eth0]:5555", "127.0.0.1:8080", otherMachine},
		{"127.0.0.1:5555", "evil.example", otherName},
		{"127.0.0.1:5555", "localhost.evil.example:8080", otherName},
		{"127.0.0.1:5555", "localhost.:8080", otherName},
		{"127.0.0.1:5555", "localhoſt:8080", otherName},
		{"127.0.0.1:5555", "0.0.0.0:8080", otherName},
		{"127.0.0.1:5555", "[::1", otherName}, // unmatched brackets
		{"127.0.0.1:5555", "::1]", otherName},
		{"127.0.0.1:5555", "", otherName},
	} {
		req := httptest.NewRequest(http.MethodGet, paymentstest.DashboardPath, nil)
		req.RemoteAddr, req.Host = tc.remoteAddr, tc.host
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if tc.refusal == "" {
			assert.Equal(t, http.StatusOK, w.Code, "%s, Host %q", tc.remoteAddr, tc.host)
			continue
		}
		assert.Equal(t, http.StatusForbidden, w.Code, "%s, Host %q", tc.remoteAddr, tc.host)
		assert.Equal(t, tc.refusal, w.Body.String(), "%s, Host %q", tc.remoteAddr, tc.host)
	}
}

// TestDashboardInAGoTest is the guide's "In a Go test": a fake started with
// the dashboard logs an address that serves the page.
func TestDashboardInAGoTest(t *testing.T) {
	rc := newReceiver(t, nil)
	receiverURL := rc.URL
	// region dashboard-in-a-test
	srv := paymentstest.NewServer(paymentstest.WithSandbox(paymentstest.Sandbox{Dashboard: true}),
		paymentstest.WithWebhook(paymentstest.Webhook{URL: receiverURL}))
	defer srv.Close()
	t.Log("dashboard:", srv.URL()+"/_dashboard/")
	// endregion
	p := dashGet(t, srv.URL()+"/_dashboard/", nil)
	assert.Equal(t, http.StatusOK, p.status)
}
