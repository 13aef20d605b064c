package testservers

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Redis is a Redis server for tests.
type Redis struct {
	url      string
	external bool

	bin        string
	dir        string
	port       int
	password   string
	persistent bool
	cmd        *exec.Cmd
	watchdog   *watchdog
}

// URL is the server's connection URL (redis://:password@host:port/0). It
// carries a password: print it with Redacted.
func (r *Redis) URL() string { return r.url }

// Redacted is the URL with its password masked.
func (r *Redis) Redacted() string { return redacted(r.url) }

// Password is the server's password ("" for an external server given
// without one).
func (r *Redis) Password() string { return password(r.url) }

// SharedRedis returns the server this test binary shares between its tests:
// PAYMENTS_TEST_REDIS_URL when set, else a throwaway one (without
// persistence) started on first use and stopped by Main. Give each test its
// own key prefix.
func SharedRedis(tb testing.TB) *Redis {
	tb.Helper()
	skipShort(tb)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if u := os.Getenv(EnvRedisURL); u != "" {
		return &Redis{url: u, external: true}
	}
	if shared.redis == nil && shared.redisErr == nil {
		shared.redis, shared.redisErr = startRedis(false)
	}
	if shared.redisErr != nil {
		unavailable(tb, "Redis", EnvRedisURL, shared.redisErr)
	}
	return shared.redis
}

// StartRedis starts a throwaway server for this test alone, which it may
// stop and start again (Stop, Start), and removes it when the test ends.
// A persistent server appends every write to its log file before answering
// (appendfsync always), so that a stop loses nothing, as a production Redis
// that holds processed event ids must be configured.
func StartRedis(tb testing.TB, persistent bool) *Redis {
	tb.Helper()
	skipShort(tb)
	r, err := startRedis(persistent)
	if err != nil {
		unavailable(tb, "Redis", EnvRedisURL, err)
	}
	tb.Cleanup(r.close)
	return r
}

func startRedis(persistent bool) (_ *Redis, err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("%w: no redis-server in PATH", errNotInstalled)
	}
	r := &Redis{bin: bin, password: randomHex(16), persistent: persistent}
	if r.dir, err = os.MkdirTemp("", "payments-redis-"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	for attempt := 0; ; attempt++ {
		if r.port, err = freePort(); err != nil {
			return nil, err
		}
		r.url = (&url.URL{Scheme: "redis", User: url.UserPassword("", r.password),
			Host: "127.0.0.1:" + strconv.Itoa(r.port), Path: "/0"}).String()
		if err = r.start(); err == nil || attempt == 2 {
			return r, err
		}
	}
}

// Stop kills the server (SIGKILL), as a crash would.
func (r *Redis) Stop(tb testing.TB) {
	tb.Helper()
	if r.external {
		tb.Fatalf("cannot stop %s: not started by the tests", r.Redacted())
	}
	r.kill()
}

// Start starts a stopped server again, on the same port and directory (so
// a persistent one has its data back).
func (r *Redis) Start(tb testing.TB) {
	tb.Helper()
	if err := r.start(); err != nil {
		tb.Fatal(err)
	}
}

func (r *Redis) start() error {
	if r.external {
		return fmt.Errorf("cannot start %s: not started by the tests", r.Redacted())
	}
	aof := "no"
	if r.persistent {
		aof = "yes"
	}
	logPath := filepath.Join(r.dir, "log")
	r.cmd = exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--dir", r.dir, "--save", "", "--appendonly", aof, "--appendfsync", "always",
		"--requirepass", r.password, "--logfile", logPath, "--daemonize", "no")
	if err := r.cmd.Start(); err != nil {
		return err
	}
	w, err := startWatchdog("kill -9 " + strconv.Itoa(r.cmd.Process.Pid) + "; rm -rf " + shellQuote(r.dir))
	if err != nil {
		r.kill()
		return err
	}
	r.watchdog = w
	if err := r.waitReady(10 * time.Second); err != nil {
		r.kill()
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("redis-server: %w\nserver log:\n%s", err, tail(string(log), 2000))
	}
	return nil
}

// waitReady waits until the server answers AUTH and PING (it refuses
// commands while it loads its data).
func (r *Redis) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	auth := fmt.Sprintf("*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n*1\r\n$4\r\nPING\r\n", len(r.password), r.password)
	var last error
	for time.Now().Before(deadline) {
		if last = r.ping(auth); last == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v: %v", limit, last)
}

func (r *Redis) ping(auth string) error {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(r.port), time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(auth)); err != nil {
		return err
	}
	br := bufio.NewReader(c)
	for _, want := range []string{"+OK", "+PONG"} {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		if got := strings.TrimSpace(line); got != want {
			return fmt.Errorf("answered %q", got)
		}
	}
	return nil
}

func (r *Redis) kill() {
	r.watchdog.stop()
	r.watchdog = nil
	if r.cmd != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

// close stops the server and removes its directory.
func (r *Redis) close() {
	if r.external || r.dir == "" {
		return
	}
	r.kill()
	_ = os.RemoveAll(r.dir)
}

// Freeze stops the server with SIGSTOP, as a hung host would: connections
// stay open, and nothing answers until Thaw.
func (r *Redis) Freeze(tb testing.TB) {
	tb.Helper()
	if r.external || r.cmd == nil {
		tb.Fatalf("cannot freeze %s: not running, or not started by the tests", r.Redacted())
	}
	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatal(err)
	}
}

// Thaw resumes a frozen server with SIGCONT.
func (r *Redis) Thaw(tb testing.TB) {
	tb.Helper()
	if r.external || r.cmd == nil {
		tb.Fatalf("cannot thaw %s: not running, or not started by the tests", r.Redacted())
	}
	if err := r.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		tb.Fatal(err)
	}
}
