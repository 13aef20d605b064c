package testservers

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recordingTB records what unavailable asks of a test instead of doing it.
type recordingTB struct {
	testing.TB
	skipped, failed string
}

// unavailable calls only these; any other method would panic on the nil
// testing.TB.
func (r *recordingTB) Helper()                      {}
func (r *recordingTB) Skip(args ...any)             { r.skipped = fmt.Sprint(args...) }
func (r *recordingTB) Fatal(args ...any)            { r.failed = fmt.Sprint(args...) }
func (r *recordingTB) Fatalf(f string, args ...any) { r.failed = fmt.Sprintf(f, args...) }

func TestMissingServersSkipWithWhatToInstall(t *testing.T) {
	t.Setenv(EnvRequireServers, "")
	t.Setenv("PATH", t.TempDir()) // no redis-server
	_, err := startRedis(false)
	if !errors.Is(err, errNotInstalled) {
		t.Fatalf("startRedis without redis-server: %v, want errNotInstalled", err)
	}
	r := &recordingTB{}
	unavailable(r, "Redis", EnvRedisURL, err)
	if r.failed != "" || !strings.Contains(r.skipped, "apt-get install postgresql redis-server") || !strings.Contains(r.skipped, EnvRedisURL) {
		t.Errorf("skipped %q, failed %q; want a skip that says what to install", r.skipped, r.failed)
	}
}

func TestMissingServersFailWhenRequired(t *testing.T) {
	t.Setenv(EnvRequireServers, "1")
	r := &recordingTB{}
	unavailable(r, "PostgreSQL", EnvPostgresURL, fmt.Errorf("%w: no initdb", errNotInstalled))
	if r.skipped != "" || !strings.Contains(r.failed, "apt-get install postgresql redis-server") || !strings.Contains(r.failed, EnvRequireServers+"=1") {
		t.Errorf("skipped %q, failed %q; want a failure", r.skipped, r.failed)
	}
}

// A server that is installed but does not start is a failure, never a skip.
func TestBrokenServerFails(t *testing.T) {
	t.Setenv(EnvRequireServers, "")
	r := &recordingTB{}
	unavailable(r, "PostgreSQL", EnvPostgresURL, errors.New("initdb: exit status 1"))
	if r.skipped != "" || r.failed == "" {
		t.Errorf("skipped %q, failed %q; want a failure", r.skipped, r.failed)
	}
}
