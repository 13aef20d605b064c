// Package dashboard holds the browser tests of the sandbox's dashboard
// (paymentstest.WithDashboard, served by cmd/payments-sandbox): they drive
// headless Chromium with chromedp. It is a module of its own so that the
// browser driver never enters the graph of the SDK's module.
//
// Run them with
//
//	cd e2e/dashboard && go test ./...
//
// They need Chromium (Debian: apt-get install chromium); without it they
// skip, unless PAYMENTS_TEST_REQUIRE_SERVERS=1 (as in CI), which makes a
// missing browser a failure. PAYMENTS_DASHBOARD_SCREENSHOT=../../docs/dashboard.png
// writes a screenshot of the dashboard at 1280 px there.
package dashboard
