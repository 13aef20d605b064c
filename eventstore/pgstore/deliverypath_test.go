package pgstore_test

import (
	"context"
	"go/parser"
	"go/token"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// claimOrLease are the project's files of claim, lease and heartbeat code:
// the run-during-delivery mode, which a delivery handed off to the Queue
// must not cross. Any file whose name says claim or lease counts too.
var claimOrLease = []string{
	"webhook/handler.go", "webhook/clock.go", "webhook/lease.go", "webhook/recent.go",
	"webhook/settle.go", "webhook/store.go",
	"eventstore/pgstore/pgstore.go", "eventstore/pgstore/lease.go",
	"eventstore/pgstore/migrate.go", "eventstore/pgstore/sql.go",
}

// TestDeliveryPathFiles: one delivery on the recommended path (NewQueue
// with its defaults behind webhook.NewQueueHandler), from the HTTP request
// to the commit of the merchant's function, crosses at most 8 of the
// project's files, none of them claim or lease code, and they are the
// files the package doc lists under "One delivery's path" (issue 46). It
// reads them from what ran: testdata/deliverypath, built with coverage,
// migrates and starts a Queue, serves a first delivery, clears its
// counters, sends a second one over HTTP, waits until the merchant's row
// committed and writes the counters of that delivery alone.
func TestDeliveryPathFiles(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	// The program's tables, River's included, under their default names in
	// a schema of the test's own: the URL's search_path.
	schema := uniqueName("path_")
	if _, err := pool.Exec(testCtx(t), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = pool.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
	})
	u, err := url.Parse(testPoolURL(t))
	if err != nil {
		t.Fatal("the server's URL does not parse")
	}
	query := u.Query()
	query.Set("search_path", schema)
	u.RawQuery = query.Encode()

	// Read, so that go test's cache knows the program.
	if _, err := os.ReadFile("testdata/deliverypath/main.go"); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "deliverypath")
	build := exec.Command("go", "build", "-cover", "-covermode=atomic", "-coverpkg=github.com/paymentsapi/payments-go/...", "-o", bin, "./testdata/deliverypath")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	counters := t.TempDir()
	run := exec.Command(bin, counters, u.String())
	run.Env = append(os.Environ(), "GOCOVERDIR="+t.TempDir())
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("deliverypath: %v\n%s", err, out)
	}
	text := filepath.Join(t.TempDir(), "cover.txt")
	if out, err := exec.Command("go", "tool", "covdata", "textfmt", "-i="+counters, "-o="+text).CombinedOutput(); err != nil {
		t.Fatalf("go tool covdata: %v\n%s", err, out)
	}
	profile, err := os.ReadFile(text)
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/paymentsapi/payments-go/"
	files := map[string]bool{}
	for _, line := range strings.Split(string(profile), "\n")[1:] {
		// file:start.col,end.col statements count
		fields := strings.Fields(line)
		if len(fields) != 3 || fields[2] == "0" {
			continue
		}
		file, _, _ := strings.Cut(fields[0], ":")
		if file = strings.TrimPrefix(file, module); !strings.Contains(file, "/testdata/") {
			files[file] = true
		}
	}
	crossed := slices.Sorted(maps.Keys(files))
	t.Logf("one delivery crossed %d files: %s", len(crossed), strings.Join(crossed, " "))
	if len(crossed) == 0 || !slices.Contains(crossed, "eventstore/pgstore/queue.go") || !slices.Contains(crossed, "webhook/serve.go") {
		t.Fatal("the counters do not show the delivery: the program measured nothing")
	}
	if len(crossed) > 8 {
		t.Errorf("one delivery crossed %d files, more than 8", len(crossed))
	}
	for _, f := range crossed {
		base := filepath.Base(f)
		if slices.Contains(claimOrLease, f) || strings.Contains(base, "claim") || strings.Contains(base, "lease") {
			t.Errorf("one delivery crossed %s: claim or lease code", f)
		}
	}
	if listed := docPathFiles(t); !slices.Equal(crossed, listed) {
		t.Errorf("the package doc lists %v as one delivery's path; the delivery crossed %v", listed, crossed)
	}
}

// docPathFiles returns the files listed, one a bullet, in the section "One
// delivery's path" of the package doc (doc.go), sorted.
func docPathFiles(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil || f.Doc == nil {
		t.Fatalf("doc.go: %v", err)
	}
	_, section, found := strings.Cut(f.Doc.Text(), "\n# One delivery's path\n")
	if !found {
		t.Fatal(`the package doc has no section "One delivery's path"`)
	}
	section, _, _ = strings.Cut(section, "\n# ")
	var files []string
	for _, line := range strings.Split(section, "\n") {
		if item, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			file, _, _ := strings.Cut(item, ":")
			files = append(files, file)
		}
	}
	slices.Sort(files)
	return files
}
