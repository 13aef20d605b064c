package testservers

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Postgres is a PostgreSQL server for tests.
type Postgres struct {
	url      string
	external bool

	bin      string   // directory of initdb and pg_ctl
	asUser   []string // command prefix that runs as the postgres user, when root
	dir      string   // owned by the server's user: data/, sock/, log
	running  bool
	watchdog *watchdog
	frozen   []int // the processes Freeze stopped
}

// URL is the server's connection URL. It carries a password: print it with
// Redacted.
func (p *Postgres) URL() string { return p.url }

// Redacted is the URL with its password masked.
func (p *Postgres) Redacted() string { return redacted(p.url) }

// Password is the server's password ("" for an external server given
// without one), for tests that check it never reaches a log or an error.
func (p *Postgres) Password() string { return password(p.url) }

// SharedPostgres returns the server this test binary shares between its
// tests: PAYMENTS_TEST_POSTGRES_URL when set, else a throwaway one started on
// first use and stopped by Main. Give each test its own table.
func SharedPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	skipShort(tb)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if u := os.Getenv(EnvPostgresURL); u != "" {
		return &Postgres{url: u, external: true}
	}
	if shared.pg == nil && shared.pgErr == nil {
		shared.pg, shared.pgErr = startPostgres()
	}
	if shared.pgErr != nil {
		unavailable(tb, "PostgreSQL", EnvPostgresURL, shared.pgErr)
	}
	return shared.pg
}

// StartPostgres starts a throwaway server for this test alone, which it may
// stop and start again (Stop, Start), and removes it when the test ends.
func StartPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	skipShort(tb)
	p, err := startPostgres()
	if err != nil {
		unavailable(tb, "PostgreSQL", EnvPostgresURL, err)
	}
	tb.Cleanup(p.close)
	return p
}

// findPostgresBin returns the directory of initdb and pg_ctl: from PATH,
// else the newest of Debian's /usr/lib/postgresql/<version>/bin.
func findPostgresBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dirs[i])), 64)
		vj, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dirs[j])), 64)
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: no initdb in PATH or /usr/lib/postgresql/*/bin", errNotInstalled)
}

func startPostgres() (_ *Postgres, err error) {
	bin, err := findPostgresBin()
	if err != nil {
		return nil, err
	}
	p := &Postgres{bin: bin}
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		// initdb and pg_ctl refuse to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("%w: running as root and there is no postgres user to run the server as", errNotInstalled)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			return nil, fmt.Errorf("%w: running as root and there is no runuser", errNotInstalled)
		}
		p.asUser = []string{runuser, "-u", "postgres", "--"}
	}
	if p.dir, err = os.MkdirTemp("", "payments-pg-"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	pass := randomHex(16)
	pwfile := filepath.Join(p.dir, "pw")
	if err := os.WriteFile(pwfile, []byte(pass+"\n"), 0o600); err != nil {
		return nil, err
	}
	for _, f := range []string{p.dir, pwfile} {
		if err := os.Chown(f, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(p.dir, "data")
	if err := p.run("initdb", "-D", data, "-U", "postgres", "--pwfile", pwfile, "-E", "UTF8",
		"--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "--no-instructions"); err != nil {
		return nil, err
	}
	if err := p.run("mkdir", "-m", "0700", filepath.Join(p.dir, "sock")); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		// The last setting of a name wins: a retry appends another port.
		// fsync is off for speed: an immediate stop loses nothing, since
		// commits still reach the kernel (synchronous_commit stays on).
		conf := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n"+
			"fsync = off\nfull_page_writes = off\nmax_connections = 300\n",
			port, filepath.Join(p.dir, "sock"))
		if err := appendFile(filepath.Join(data, "postgresql.conf"), conf); err != nil {
			return nil, err
		}
		p.url = (&url.URL{Scheme: "postgres", User: url.UserPassword("postgres", pass),
			Host: "127.0.0.1:" + strconv.Itoa(port), Path: "/postgres", RawQuery: "sslmode=disable"}).String()
		if err = p.start(); err == nil || attempt == 2 {
			return p, err
		}
	}
}

// Stop stops the server at once, as a crash would ("pg_ctl stop -m
// immediate"): connections break and nothing is flushed cleanly.
func (p *Postgres) Stop(tb testing.TB) {
	tb.Helper()
	if err := p.stop("immediate"); err != nil {
		tb.Fatal(err)
	}
}

// Start starts a stopped server again, on the same port and data.
func (p *Postgres) Start(tb testing.TB) {
	tb.Helper()
	if err := p.start(); err != nil {
		tb.Fatal(err)
	}
}

func (p *Postgres) start() error {
	if p.external {
		return fmt.Errorf("cannot start %s: not started by the tests", p.Redacted())
	}
	data := filepath.Join(p.dir, "data")
	if err := p.run("pg_ctl", "-D", data, "-l", filepath.Join(p.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "log"))
		return fmt.Errorf("%w\nserver log:\n%s", err, tail(string(log), 2000))
	}
	p.running = true
	w, err := startWatchdog("kill -CONT $(cat " + shellQuote(p.frozenFile()) + " 2>/dev/null) 2>/dev/null; " + shellJoin(append(p.asUser, filepath.Join(p.bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop")) +
		" >/dev/null 2>&1; rm -rf " + shellQuote(p.dir))
	p.watchdog = w
	return err
}

func (p *Postgres) stop(mode string) error {
	if p.external {
		return fmt.Errorf("cannot stop %s: not started by the tests", p.Redacted())
	}
	p.watchdog.stop()
	p.watchdog = nil
	if err := p.thaw(); err != nil {
		return err
	}
	if !p.running {
		return nil
	}
	p.running = false
	return p.run("pg_ctl", "-D", filepath.Join(p.dir, "data"), "-m", mode, "-w", "stop")
}

// close stops the server and removes its directory.
func (p *Postgres) close() {
	if p.external || p.dir == "" {
		return
	}
	_ = p.stop("fast")
	_ = os.RemoveAll(p.dir)
}

// run runs a PostgreSQL program (or any command) as the server's user.
func (p *Postgres) run(name string, args ...string) error {
	if !strings.Contains(name, "/") {
		if _, err := os.Stat(filepath.Join(p.bin, name)); err == nil {
			name = filepath.Join(p.bin, name)
		}
	}
	argv := append(append(append([]string(nil), p.asUser...), name), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", filepath.Base(name), err, tail(string(out), 2000))
	}
	return nil
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Freeze stops every process of the server with SIGSTOP (the postmaster
// and its backends), as a hung host would: connections stay open, and
// nothing answers until Thaw. The processes are listed in a file that the
// watchdog resumes before it stops the server, should the tests die first.
func (p *Postgres) Freeze(tb testing.TB) {
	tb.Helper()
	if p.external || !p.running || p.frozen != nil {
		tb.Fatalf("cannot freeze %s: not running, already frozen, or not started by the tests", p.Redacted())
	}
	b, err := os.ReadFile(filepath.Join(p.dir, "data", "postmaster.pid"))
	if err != nil {
		tb.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		tb.Fatalf("postmaster.pid: %v", err)
	}
	pids := processTree(pid)
	list := make([]string, len(pids))
	for i, p := range pids {
		list[i] = strconv.Itoa(p)
	}
	if err := os.WriteFile(p.frozenFile(), []byte(strings.Join(list, " ")), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := signalAll(pids, syscall.SIGSTOP); err != nil {
		tb.Fatal(err)
	}
	p.frozen = pids
}

// Thaw resumes a frozen server with SIGCONT.
func (p *Postgres) Thaw(tb testing.TB) {
	tb.Helper()
	if err := p.thaw(); err != nil {
		tb.Fatal(err)
	}
}

func (p *Postgres) thaw() error {
	if p.frozen == nil {
		return nil
	}
	err := signalAll(p.frozen, syscall.SIGCONT)
	p.frozen = nil
	_ = os.Remove(p.frozenFile())
	return err
}

func (p *Postgres) frozenFile() string { return filepath.Join(p.dir, "frozen.pids") }
