package paymentstest_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
)

// The markers: a value of its own in every personal field of the SDK's
// types, so that the page can be searched for each.
const (
	markAccount     = "4041731952"             // a recipient's account number, at create
	markAccountNew  = "5052846173"             // and after an update
	markIDNumber    = "IDMARK-77120-A"         // an identification number, at create
	markIDNumberNew = "IDMARK-55301-B"         // and after an update
	markDetails     = "GB29PDMK60161331926819" // payment details' account number, at create
	markDetailsNew  = "DE89PDUP37040044053201" // and after an update
	markEmail       = "marker.email.4417@example.com"
	markBVN         = "22233344455"
	markMobile      = "+2348015550199"
)

// markImage is an identification image (standard Base64).
var markImage = base64.StdEncoding.EncodeToString([]byte("IMAGE-MARK-8831"))

// personalAPIField is a field of the SDK's API snapshot whose type is one
// the SDK masks where printed: AccountNumber or PersonalData.
var personalAPIField = regexp.MustCompile(`(?m)^type (\w+) struct, (\w+) [\[\]*]*(AccountNumber|PersonalData)\b`)

// sdkPersonalFields lists the personal fields of the SDK's exported types,
// as "Type.Field", from the API snapshot that .ci/api holds to the code.
func sdkPersonalFields(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "api", "github.com_paymentsapi_payments-go.txt"))
	require.NoError(t, err)
	var fields []string
	for _, m := range personalAPIField.FindAllStringSubmatch(string(b), -1) {
		fields = append(fields, m[1]+"."+m[2])
	}
	require.GreaterOrEqual(t, len(fields), 10, "the snapshot's personal fields: the pattern is broken")
	return fields
}

// echoReceiver is a webhook endpoint that answers with every marker it
// finds in a delivery, in its body and in a header: the worst an endpoint
// can do to the page.
type echoReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	markers []string
	echoed  map[string]bool
}

func newEchoReceiver(t *testing.T, markers ...string) *echoReceiver {
	t.Helper()
	rc := &echoReceiver{markers: markers, echoed: map[string]bool{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var found []string
		rc.mu.Lock()
		for _, m := range rc.markers {
			if bytes.Contains(body, []byte(m)) {
				found = append(found, m)
				rc.echoed[m] = true
			}
		}
		rc.mu.Unlock()
		w.Header().Set("X-Echo", strings.Join(found, " "))
		fmt.Fprintf(w, "got %s", strings.Join(found, " "))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *echoReceiver) add(markers ...string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.markers = append(rc.markers, markers...)
}

func (rc *echoReceiver) hasEchoed(m string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.echoed[m]
}

// dashForm is a form of the dashboard: its method, its action and its
// fields, each with the values to send (hidden fields their one value,
// selects and buttons each of their choices, text fields what fill gives).
type dashForm struct {
	method, action string
	names          []string
	values         map[string][]string
}

var (
	formPattern   = regexp.MustCompile(`(?s)<form method="(get|post)" action="([^"]+)"[^>]*>(.*?)</form>`)
	inputPattern  = regexp.MustCompile(`<input[^>]*>`)
	selectPattern = regexp.MustCompile(`(?s)<select name="([^"]+)"[^>]*>(.*?)</select>`)
	optionPattern = regexp.MustCompile(`<option(?: value="([^"]*)")?[^>]*>([^<]*)</option>`)
	buttonPattern = regexp.MustCompile(`<button[^>]*\bname="([^"]+)" value="([^"]*)"`)
	attrPattern   = regexp.MustCompile(`\b(type|name|value)="([^"]*)"`)
)

// formsOf reads the forms of a page; fill gives the values of each text
// field by name, and a text field it does not know fails the test (a new
// form must be filled here, and so searched).
func formsOf(t *testing.T, body string, fill map[string][]string) []dashForm {
	t.Helper()
	var forms []dashForm
	for _, m := range formPattern.FindAllStringSubmatch(body, -1) {
		f := dashForm{method: m[1], action: html.UnescapeString(m[2]), values: map[string][]string{}}
		add := func(name string, vs ...string) {
			if _, ok := f.values[name]; !ok {
				f.names = append(f.names, name)
			}
			f.values[name] = append(f.values[name], vs...)
		}
		for _, in := range inputPattern.FindAllString(m[3], -1) {
			attrs := map[string]string{}
			for _, a := range attrPattern.FindAllStringSubmatch(in, -1) {
				attrs[a[1]] = html.UnescapeString(a[2])
			}
			switch {
			case attrs["name"] == "":
			case attrs["type"] == "hidden":
				add(attrs["name"], attrs["value"])
			default:
				vs, ok := fill[attrs["name"]]
				require.True(t, ok, "the form %s has a field %q this test does not fill: add it to fill", f.action, attrs["name"])
				add(attrs["name"], vs...)
			}
		}
		for _, s := range selectPattern.FindAllStringSubmatch(m[3], -1) {
			for _, o := range optionPattern.FindAllStringSubmatch(s[2], -1) {
				v := o[2]
				if strings.Contains(o[0], ` value="`) {
					v = o[1]
				}
				add(s[1], html.UnescapeString(v))
			}
		}
		for _, b := range buttonPattern.FindAllStringSubmatch(m[3], -1) {
			add(b[1], html.UnescapeString(b[2]))
		}
		forms = append(forms, f)
	}
	return forms
}

// submissions are the forms' value sets to send: the first value of every
// field, then each other value of each field with the others at their
// first.
func (f dashForm) submissions() []url.Values {
	base := url.Values{}
	for _, n := range f.names {
		base.Set(n, f.values[n][0])
	}
	subs := []url.Values{base}
	for _, n := range f.names {
		for _, v := range f.values[n][1:] {
			s := url.Values{}
			for k, vs := range base {
				s[k] = slices.Clone(vs)
			}
			s.Set(n, v)
			subs = append(subs, s)
		}
	}
	return subs
}

// waitAttempted waits until no delivery is pending. (WaitForDeliveries
// waits for the late payment too, which the test keeps pending.)
func waitAttempted(t *testing.T, srv *paymentstest.Server) {
	t.Helper()
	require.Eventually(t, func() bool {
		return !slices.ContainsFunc(srv.Deliveries(), func(d paymentstest.Delivery) bool { return d.Status == paymentstest.DeliveryPending })
	}, time.Minute, 5*time.Millisecond, "deliveries still pending")
}

// shownPage is a page the test fetched, with its address.
type shownPage struct {
	url  string
	body string
}

// TestDashboardMasksEveryPersonalField fills every personal field of the
// SDK's types (each field of type AccountNumber or PersonalData in the API
// snapshot) with a marker of its own: a recipient created and updated, a
// payment, a virtual account and money it received, and their events,
// delivered to an endpoint that echoes every marker it gets in its answer
// and a header. It then fetches every view of the dashboard: the page and
// its live part, every link and file, every filter (each kind, each
// resource, each marker typed in), and every action's form with each of
// its choices, the pages they lead to with a notice or a problem (markers
// typed into the forms among them), and checks that no marker appears whole
// on any, while the page still shows them masked.
func TestDashboardMasksEveryPersonalField(t *testing.T) {
	rc := newEchoReceiver(t, markAccount, markAccountNew, markIDNumber, markIDNumberNew, markDetails, markDetailsNew,
		markImage, markEmail, markBVN, markMobile)
	srv, c := start(t, append(fastHooks(rc.URL), paymentstest.WithDashboard(), paymentstest.WithProcessingDelay(time.Hour))...)

	limit := payments.Amount{Decimal: dec("100000")}
	r, err := c.Recipients.Create(ctx(t), &payments.RecipientCreateParams{
		AccountNumber: markAccount, AccountName: "Ada Lovelace", AccountType: payments.AccountTypeIndividual, AccountCurrency: "NGN",
		AmountLimit:    &limit,
		Identification: &payments.Identification{Type: payments.IdentificationPassport, Number: markIDNumber, Image: payments.PersonalData(markImage)},
		PaymentDetails: &payments.PaymentDetails{AccountNumber: markDetails, BankCode: "058"},
	})
	require.NoError(t, err)
	_, err = c.Recipients.Update(ctx(t), r.ID, &payments.RecipientUpdateParams{
		AccountNumber: markAccountNew, IdentificationType: payments.IdentificationNationalID, IdentificationNumber: markIDNumberNew,
		PaymentDetails: &payments.PaymentDetails{AccountNumber: markDetailsNew},
	})
	require.NoError(t, err)
	p := initiate(t, c, r.ID, paymentstest.AmountCompletesLate, "order-personal-1")
	_, err = c.Payments.Confirm(ctx(t), p.ConfirmParams())
	require.NoError(t, err)
	va, err := c.VirtualAccounts.Create(ctx(t), &payments.VirtualAccountCreateParams{
		AccountType: payments.AccountTypeIndividual, AccountName: "Grace Hopper", FirstName: "Grace", LastName: "Hopper",
		Email: markEmail, BVN: markBVN, MobileNumber: markMobile,
		Metadata: &payments.VirtualAccountMetadata{Country: "NG"},
	})
	require.NoError(t, err)
	in, err := srv.SimulateIncomingPayment(string(va.AccountNumber), dec("5000"), "")
	require.NoError(t, err)
	rc.add(string(va.AccountNumber), in.PayerAccount)

	// Every personal field of the SDK's types has its marker here.
	byField := map[string][]string{
		"Recipient.AccountNumber":                    {markAccount, markAccountNew},
		"RecipientCreateParams.AccountNumber":        {markAccount},
		"RecipientUpdateParams.AccountNumber":        {markAccountNew},
		"Identification.Number":                      {markIDNumber},
		"Identification.Image":                       {markImage},
		"RecipientUpdateParams.IdentificationNumber": {markIDNumberNew},
		"PaymentDetails.AccountNumber":               {markDetails, markDetailsNew},
		"VirtualAccount.AccountNumber":               {string(va.AccountNumber)},
		"VirtualAccountCreateParams.Email":           {markEmail},
		"VirtualAccountCreateParams.BVN":             {markBVN},
		"VirtualAccountCreateParams.MobileNumber":    {markMobile},
		"VirtualAccountPayment.AccountNumber":        {in.AccountNumber},
		"Payer.AccountNumber":                        {in.PayerAccount},
	}
	var markers []string
	for _, f := range sdkPersonalFields(t) {
		require.NotEmpty(t, byField[f], "the SDK masks %s: give it a marker here", f)
	}
	for _, ms := range byField {
		for _, m := range ms {
			if !slices.Contains(markers, m) {
				markers = append(markers, m)
			}
		}
	}
	waitAttempted(t, srv)

	var pages []shownPage
	get := func(u string) shownPage {
		t.Helper()
		for _, h := range []map[string]string{nil, {"X-Dashboard-Live": "1"}} {
			pg := dashGet(t, u, h)
			require.Equal(t, http.StatusOK, pg.status, "%s %v:\n%s", u, h, pg.body)
			pages = append(pages, shownPage{u, pg.body})
		}
		return pages[len(pages)-2]
	}
	// What the forms are filled with: every resource, and each marker
	// typed in where the dashboard echoes what it was given.
	typed := func(good ...string) []string { return append(good, markers...) }
	fill := map[string][]string{
		"resource": typed(r.ID, p.ID, va.ID, ""),
		"url":      typed(rc.URL),
		"waits":    typed("1ms"),
		"duration": typed("1s"),
	}

	main := get(srv.DashboardURL())
	var posted []string
	var pauses []dashForm
	for _, f := range formsOf(t, main.body, fill) {
		switch {
		case f.method == "get":
			for _, q := range f.submissions() {
				get(srv.URL() + f.action + "?" + q.Encode())
			}
		case strings.HasSuffix(f.action, "/pause"):
			pauses = append(pauses, f) // last: the other actions' events are delivered first
		default:
			posted = append(posted, postForm(t, srv, f, get)...)
		}
	}
	waitAttempted(t, srv)
	for _, f := range pauses {
		posted = append(posted, postForm(t, srv, f, get)...)
	}
	assert.Equal(t, paymentstest.DashboardActions(), slices.Compact(slices.Sorted(slices.Values(posted))), "every action's form was sent")
	for _, m := range regexp.MustCompile(`(?:href|src)="([^"]+)"`).FindAllStringSubmatch(main.body, -1) {
		u, err := url.Parse(html.UnescapeString(m[1]))
		require.NoError(t, err)
		get(srv.URL() + u.Path + "?" + u.RawQuery)
	}
	for _, u := range []string{srv.URL() + "/", strings.TrimSuffix(srv.DashboardURL(), "/")} {
		redirect := dashGet(t, u, nil)
		require.Equal(t, http.StatusSeeOther, redirect.status, u)
		assert.Equal(t, paymentstest.DashboardPath, redirect.header.Get("Location"), u)
		pages = append(pages, shownPage{u, redirect.body})
	}

	// The markers reached the service and the endpoint: the page had them
	// to show.
	for _, m := range []string{markAccount, markAccountNew, markIDNumber, markIDNumberNew, markDetails, markDetailsNew, string(va.AccountNumber), in.PayerAccount} {
		assert.True(t, rc.hasEchoed(m), "the endpoint got and echoed %s", m)
	}

	var all strings.Builder
	leaks := map[string][]string{}
	for _, pg := range pages {
		text := html.UnescapeString(pg.body)
		all.WriteString(text)
		for _, m := range markers {
			if strings.Contains(text, m) {
				leaks[m] = append(leaks[m], pg.url)
			}
		}
	}
	for m, where := range leaks {
		t.Errorf("%s is shown whole on %d of %d pages, such as %s", m, len(where), len(pages), where[0])
	}
	shown := all.String()
	for _, masked := range []string{"••••1952", "••••6173", "••••6819", "••••3201", "[redacted]", "X-Echo: ••••"} {
		assert.True(t, strings.Contains(shown, masked), "no page shows %s: the personal data must be there, masked", masked)
	}
}

// postForm sends each submission of a dashboard form and fetches the page
// its answer leads to; it returns the action's name once per submission.
func postForm(t *testing.T, srv *paymentstest.Server, f dashForm, get func(string) shownPage) []string {
	t.Helper()
	name, ok := strings.CutPrefix(f.action, paymentstest.DashboardPath+"actions/")
	require.True(t, ok, "a form posts to %s", f.action)
	var names []string
	for _, q := range f.submissions() {
		answer := dashPost(t, srv, name, q, nil)
		require.Equal(t, http.StatusSeeOther, answer.status, "%s %v: %s", name, q, answer.body)
		loc := answer.header.Get("Location")
		require.True(t, strings.HasPrefix(loc, paymentstest.DashboardPath), "%s leads to %q", name, loc)
		get(srv.URL() + loc)
		names = append(names, name)
	}
	return names
}
