package dashboard

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds Chromium, or skips the test (fails it under
// PAYMENTS_TEST_REQUIRE_SERVERS=1, as in CI).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no Chromium for the dashboard's browser tests: apt-get install chromium"
	if os.Getenv("PAYMENTS_TEST_REQUIRE_SERVERS") == "1" {
		t.Fatal(msg + " (PAYMENTS_TEST_REQUIRE_SERVERS=1: a missing browser is a failure)")
	}
	t.Skip(msg)
	return ""
}

// browser starts headless Chromium with a fresh profile and returns a tab
// whose context ends with the test (or after two minutes).
func browser(t *testing.T) context.Context {
	t.Helper()
	// A fresh profile, removed at the end; not t.TempDir, whose strict
	// cleanup fails while Chromium's helpers still write to it.
	profile, err := os.MkdirTemp("", "dashboard-e2e-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), // the tests may run as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	tab, cancelTime := context.WithTimeout(tab, 2*time.Minute)
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	if err := chromedp.Run(tab); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return tab
}
