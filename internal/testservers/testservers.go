// Package testservers starts throwaway database servers for tests: a
// PostgreSQL from the distribution's packages (Debian: postgresql) and a
// Redis (Debian: redis-server), each on a free loopback port, with its
// data in a temporary directory, protected by a random password, and
// stopped afterwards. PAYMENTS_TEST_POSTGRES_URL and PAYMENTS_TEST_REDIS_URL
// name servers to use instead for the shared ones.
//
// When a server can be neither found nor started, the test is skipped with
// a message saying what to install; with PAYMENTS_TEST_REQUIRE_SERVERS=1 (CI)
// it fails instead. Under go test -short every test that needs a server is
// skipped.
//
// Each server started here has a watchdog process that stops it and removes
// its directory if the test binary dies without cleaning up.
package testservers

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Environment variables the package reads.
const (
	EnvPostgresURL    = "PAYMENTS_TEST_POSTGRES_URL"
	EnvRedisURL       = "PAYMENTS_TEST_REDIS_URL"
	EnvRequireServers = "PAYMENTS_TEST_REQUIRE_SERVERS"
)

// InstallHint is what to install for the tests that need servers.
const InstallHint = "apt-get install postgresql redis-server"

// errNotInstalled marks a server whose programs are missing.
var errNotInstalled = errors.New("not installed")

// unavailable skips the test, or fails it when servers are required or
// when the server is installed but would not start.
func unavailable(tb testing.TB, what, env string, err error) {
	tb.Helper()
	msg := fmt.Sprintf("%s is not available (%v): install it (%s) or set %s", what, err, InstallHint, env)
	switch {
	case os.Getenv(EnvRequireServers) == "1":
		tb.Fatalf("%s; %s=1 forbids skipping", msg, EnvRequireServers)
	case errors.Is(err, errNotInstalled):
		tb.Skip(msg)
	default:
		tb.Fatal(msg)
	}
}

// skipShort skips a test that needs a database server under go test -short,
// the quick edit-test loop; CI runs without -short, where such tests run.
func skipShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts a database server; skipped with -short")
	}
}

// shared holds the servers that one test binary shares between its tests.
var shared struct {
	mu       sync.Mutex
	pg       *Postgres
	pgErr    error
	redis    *Redis
	redisErr error
}

// Main runs the tests and then stops the shared servers. Use it as
//
//	func TestMain(m *testing.M) { os.Exit(testservers.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.pg != nil {
		shared.pg.close()
	}
	if shared.redis != nil {
		shared.redis.close()
	}
	return code
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// watchdog is a shell process that runs cleanup once this process has
// exited: it covers a test binary killed before its cleanups ran. It runs
// in a process group of its own, so that an interrupt of the test does not
// end it first.
type watchdog struct{ cmd *exec.Cmd }

func startWatchdog(cleanup string) (*watchdog, error) {
	script := "while kill -0 " + strconv.Itoa(os.Getpid()) + " 2>/dev/null; do sleep 1; done; " + cleanup
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	return &watchdog{cmd}, nil
}

// stop ends the watchdog without running its cleanup.
func (w *watchdog) stop() {
	if w == nil {
		return
	}
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
}

// redacted masks the password of a URL.
func redacted(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an unparsable URL)"
	}
	return u.Redacted()
}

// password is a URL's password, if any.
func password(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
