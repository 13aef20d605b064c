package openapi

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every x-assumption of payments-api.yaml names a row of
// docs/assumptions.md by its Topic, exactly as the table spells it.
func TestDocumentAssumptionsNameRows(t *testing.T) {
	table, err := os.ReadFile("../docs/assumptions.md")
	if err != nil {
		t.Fatal(err)
	}
	topics := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([^|]+?) \|`).FindAllStringSubmatch(string(table), -1) {
		topics[m[1]] = true
	}
	if !topics["Confirm payment"] || !topics["Webhook signature"] {
		t.Fatalf("read too few topics from docs/assumptions.md: %v", topics)
	}
	used := regexp.MustCompile(`(?m)x-assumption[a-z-]*: (.+)$`).FindAllStringSubmatch(string(Document()), -1)
	if len(used) < 20 {
		t.Fatalf("found only %d x-assumption fields", len(used))
	}
	seen := map[string]bool{}
	for _, m := range used {
		topic := strings.TrimSpace(m[1])
		seen[topic] = true
		if !topics[topic] {
			t.Errorf("x-assumption %q names no row of docs/assumptions.md", topic)
		}
	}
	t.Logf("%d x-assumption fields name %d of the %d rows", len(used), len(seen), len(topics)-1)
}

// The document loads, validates as OpenAPI 3.1, and describes every
// operation of the SDK and the webhook.
func TestDocumentLoads(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	want := "payments.confirm payments.initiate recipients.create recipients.update virtual_accounts.create webhook.event webhooks.list_events webhooks.trigger"
	got := c.operations()
	slices.Sort(got)
	if strings.Join(got, " ") != want {
		t.Fatalf("operations %v, want %s", got, want)
	}
	if !c.doc.IsOpenAPI31OrLater() {
		t.Fatal("the document is not OpenAPI 3.1")
	}
}
