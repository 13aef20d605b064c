package readmecheck_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/paymentsapi/payments-go/internal/readmecheck"
)

func TestAnchors(t *testing.T) {
	md := "# payments-go\n\n## Testing without the service: `paymentstest` and `payments-sandbox`\n" +
		"```sh\n# not a heading\n```\n### A rate limit, and 429s\n## Errors\n## Errors\n"
	want := map[string]bool{
		"payments-go": true,
		"testing-without-the-service-paymentstest-and-payments-sandbox": true,
		"a-rate-limit-and-429s": true,
		"errors":                true,
		"errors-1":              true,
	}
	if got := readmecheck.Anchors(md); !reflect.DeepEqual(got, want) {
		t.Errorf("Anchors = %v, want %v", got, want)
	}
}

// TestBrokenLinks proves that the link check fails on each kind of broken
// link, and passes the good ones.
func TestBrokenLinks(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"README.md":        "# Top\n## Install\n",
		"docs/guide.md":    "# Guide\n## Receiving webhooks\n",
		"webhook/doc.go":   "package webhook\n",
		"docs/compose/x.y": "",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	md := "# Guide\n## Receiving webhooks\n" +
		"[ok](../README.md#install) [ok](#receiving-webhooks) [ok](../webhook/doc.go) [ok](compose)\n" +
		"[web](https://example.com/x#y) `[code](nowhere.md)` [ok](guide.md#guide)\n" +
		"```md\n[in a block](nowhere.md)\n```\n" +
		"[no file](../nowhere.md)\n" +
		"[no anchor](../README.md#installing)\n" +
		"[no local anchor](#missing)\n" +
		"[outside](../../etc/passwd)\n" +
		"[ref]: ../gone.go\n"
	got := readmecheck.Checker{Root: root}.BrokenLinks("docs/guide.md", md)
	want := []string{
		`docs/guide.md:8: link "../nowhere.md": no such file or directory`,
		`docs/guide.md:9: link "../README.md#installing": README.md has no heading with the anchor #installing`,
		`docs/guide.md:10: link "#missing": docs/guide.md has no heading with the anchor #missing`,
		`docs/guide.md:11: link "../../etc/passwd": outside the repository`,
		`docs/guide.md:12: link "../gone.go": no such file or directory`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("BrokenLinks =\n%q\nwant\n%q", got, want)
	}
}
