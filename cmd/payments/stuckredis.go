package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// The payments command reads the outcome tracker's Redis keys with this
// small client of RESP (AUTH, SELECT, SMEMBERS, HMGET): the root module
// requires no Redis client (see gomod_test.go).

type respConn struct {
	conn net.Conn
	r    *bufio.Reader
}

// dialRedis connects to a redis:// or rediss:// (TLS) URL, authenticates
// and selects the URL's database.
func dialRedis(ctx context.Context, raw string) (*respConn, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, errors.New("not a redis://[user:password@]host:port[/db] URL")
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "6379")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if u.Scheme == "rediss" {
		conn = tls.Client(conn, &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12})
	}
	c := &respConn{conn: conn, r: bufio.NewReader(conn)}
	if pw, ok := u.User.Password(); ok {
		args := []string{"AUTH", pw}
		if name := u.User.Username(); name != "" {
			args = []string{"AUTH", name, pw}
		}
		if _, err := c.do(args...); err != nil {
			conn.Close()
			return nil, fmt.Errorf("AUTH: %w", err)
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" && db != "0" {
		if _, err := c.do("SELECT", db); err != nil {
			conn.Close()
			return nil, fmt.Errorf("SELECT %s: %w", db, err)
		}
	}
	return c, nil
}

// do sends a command and reads its reply: a string, nil, an int64 or a
// []any of those.
func (c *respConn) do(args ...string) (any, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c.conn, b.String()); err != nil {
		return nil, err
	}
	return c.reply(0)
}

// maxRespLen bounds a bulk string or an array from the server.
const maxRespLen = 64 << 20

func (c *respConn) reply(depth int) (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" || depth > 4 {
		return nil, errors.New("malformed reply")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, fmt.Errorf("the server says: %s", line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n > maxRespLen {
			return nil, errors.New("malformed reply")
		}
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n > maxRespLen {
			return nil, errors.New("malformed reply")
		}
		if n < 0 {
			return nil, nil
		}
		out := make([]any, 0, min(n, 1024))
		for i := 0; i < n; i++ {
			v, err := c.reply(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, errors.New("malformed reply")
}

func (c *respConn) close() { _ = c.conn.Close() }
