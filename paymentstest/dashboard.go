package paymentstest

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/paymentsapi/payments-go/internal/loopback"
)

// dashboardPath is where the dashboard of withDashboard is served on the
// server's port; GET / leads there too.
const dashboardPath = "/_dashboard/"

//go:embed dashboard
var dashboardFiles embed.FS

var dashboardTemplate = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"shortID": shortID,
}).ParseFS(dashboardFiles, "dashboard/page.html"))

// dashboardCSP is the Content-Security-Policy of every dashboard answer: the
// page's own script and style files and nothing else, no inline script or
// style, no framing, forms posted only to the dashboard.
const dashboardCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// withDashboard makes the server also serve a web page of its state at
// dashboardPath on its own port (DashboardURL returns its address):
// recipients, payments with the timeline of their events, virtual
// accounts, balances, and every event with each of its delivery attempts,
// updated live, with buttons that redeliver and trigger events, pause
// deliveries, change the webhook URL and retry schedule, move the clock and
// settle a pending payment. Open it while a test is paused in a debugger.
//
// The page needs no API key, so it answers only requests from the loopback
// interface unless withDashboardRemote says otherwise; it never shows the
// API key, a webhook secret, a whole signature, or personal data whole (see
// dashboard_mask.go). Its actions are POSTs that carry a per-server token
// and are refused from another origin. TestDashboardPagesHoldNoSecret,
// TestDashboardMasksEveryPersonalField, TestDashboardEscapes and
// TestDashboardRefusesCrossSiteActions prove it.
func withDashboard() Option {
	return func(c *config) { c.dashboard = true }
}

// withDashboardRemote lets the dashboard of withDashboard answer clients on
// other machines (when the server listens on an address they can reach, see
// withAddr). The dashboard has no login: anyone who can reach the port can
// then see the server's state and use its actions. Without it, requests
// from addresses other than loopback get 403.
func withDashboardRemote() Option {
	return func(c *config) { c.dashboard, c.dashboardRemote = true, true }
}

// dashboardURL returns the address of the dashboard, such as
// "http://127.0.0.1:41234/_dashboard/", or "" when withDashboard was not
// given.
func (s *Server) dashboardURL() string {
	if s.dash == nil {
		return ""
	}
	return s.url + dashboardPath
}

// dashboard is the state of the dashboard of one server.
type dashboard struct {
	remote bool   // withDashboardRemote
	token  string // the per-server token of every action form

	mu      sync.Mutex
	notices map[string]string // the message an action left, by its key
	order   []string          // notices' keys, oldest first
}

func newDashboard(remote bool) (*dashboard, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &dashboard{remote: remote, token: hex.EncodeToString(b), notices: map[string]string{}}, nil
}

// isDashboardPath reports whether an escaped path is the dashboard's.
func isDashboardPath(path string) bool {
	return path == "/" || path == strings.TrimSuffix(dashboardPath, "/") || strings.HasPrefix(path, dashboardPath)
}

// serveDashboard answers a request to the dashboard.
func (s *Server) serveDashboard(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", dashboardCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make the form posts' Origin "null"
	h.Set("Cache-Control", "no-store")
	if msg, ok := s.dash.allowed(r); !ok {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	path := r.URL.Path
	if path == "/" || path+"/" == dashboardPath {
		http.Redirect(w, r, dashboardPath, http.StatusSeeOther)
		return
	}
	rest := strings.TrimPrefix(path, dashboardPath)
	switch {
	case rest == "":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		s.dashboardPage(w, r, "", http.StatusOK)
	case rest == "app.js" || rest == "style.css":
		sub, _ := fs.Sub(dashboardFiles, "dashboard")
		http.ServeFileFS(w, r, sub, rest)
	case strings.HasPrefix(rest, "actions/"):
		s.dashboardAction(w, r, strings.TrimPrefix(rest, "actions/"))
	default:
		http.NotFound(w, r)
	}
}

// allowed refuses a client on another machine (unless remote) and a Host
// header that names something else than this machine (a DNS rebinding page
// would send its own name).
func (d *dashboard) allowed(r *http.Request) (string, bool) {
	if d.remote {
		return "", true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err == nil && !loopback.Host(host) {
		return "the dashboard answers only this machine (Sandbox.DashboardRemote, or payments-sandbox -dashboard-remote, opens it to others)", false
	}
	name := r.Host
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	if !loopback.Host(name) {
		return "the dashboard answers only requests for localhost or a loopback address", false
	}
	return "", true
}

// checkAction refuses a state-changing request that is not a POST of the
// dashboard's own form: a wrong or missing token, another Origin, or a
// browser that says it comes from another site.
func (d *dashboard) checkAction(r *http.Request) (string, int) {
	if r.Method != http.MethodPost {
		return "actions are POSTs", http.StatusMethodNotAllowed
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return "refused: the request comes from another site", http.StatusForbidden
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host || (u.Scheme != "http" && u.Scheme != "https") {
			return "refused: the request comes from another origin", http.StatusForbidden
		}
	}
	got := r.PostFormValue("token")
	if got == "" {
		got = r.Header.Get("X-Dashboard-Token")
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(d.token)) != 1 {
		return "refused: the form's token is missing or stale; reload the page", http.StatusForbidden
	}
	return "", 0
}

// notice keeps an action's message (a notice, or a refusal's problem) and
// returns its key, for the page it redirects to. The last 50 are kept.
func (d *dashboard) notice(msg string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	key := hex.EncodeToString(b)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.notices[key] = msg
	d.order = append(d.order, key)
	if len(d.order) > 50 {
		delete(d.notices, d.order[0])
		d.order = d.order[1:]
	}
	return key
}

func (d *dashboard) noticeOf(key string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.notices[key]
}

// dashboardPage renders the page, or only its live part when the page's
// script asks (X-Dashboard-Live: 1).
func (s *Server) dashboardPage(w http.ResponseWriter, r *http.Request, problem string, status int) {
	q := r.URL.Query()
	if problem == "" {
		problem = s.dash.noticeOf(q.Get("problem"))
	}
	v := s.dashboardView(q.Get("kind"), strings.TrimSpace(q.Get("resource")), problem, s.dash.noticeOf(q.Get("notice")))
	name := "page.html"
	if r.Header.Get("X-Dashboard-Live") == "1" {
		name = "live"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	_ = dashboardTemplate.ExecuteTemplate(w, name, v)
}

// shortID is the first 8 characters of an id, for narrow columns; the
// whole id is in the title.
func shortID(id string) string {
	if len(id) <= 8 {
		return id
	}
	return id[:8]
}
