package main

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
)

// The payments command reads the outcome tracker's PostgreSQL table with
// this small client of the wire protocol (startup, password, MD5 or
// SCRAM-SHA-256 authentication, TLS, simple queries): the root module
// requires no database driver (see gomod_test.go), and the command only
// runs one SELECT.

// pgConn is one connection, for one query.
type pgConn struct {
	conn net.Conn
	r    *bufio.Reader
}

// pgURL is what the command takes of a postgres:// URL.
type pgURL struct {
	host, user, password, database, sslmode string
}

func parsePgURL(raw string) (pgURL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return pgURL{}, errors.New("not a postgres://user:password@host:port/database URL")
	}
	p := pgURL{host: u.Host, user: u.User.Username(), database: strings.TrimPrefix(u.Path, "/"), sslmode: u.Query().Get("sslmode")}
	p.password, _ = u.User.Password()
	if u.Port() == "" {
		p.host = net.JoinHostPort(u.Hostname(), "5432")
	}
	if p.user == "" {
		p.user = "postgres"
	}
	if p.database == "" {
		p.database = p.user
	}
	switch p.sslmode {
	case "", "prefer", "disable", "require", "verify-ca", "verify-full":
	default:
		return pgURL{}, fmt.Errorf("sslmode %q: use disable, prefer, require or verify-full", p.sslmode)
	}
	return p, nil
}

// dialPg connects and authenticates. TLS is tried unless sslmode=disable,
// and required (with the server's certificate verified) for require,
// verify-ca and verify-full.
func dialPg(ctx context.Context, p pgURL) (*pgConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", p.host)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c := &pgConn{conn: conn, r: bufio.NewReader(conn)}
	if p.sslmode != "disable" {
		if err := c.startTLS(p); err != nil {
			conn.Close()
			return nil, err
		}
	}
	if err := c.startup(p); err != nil {
		c.conn.Close()
		return nil, err
	}
	return c, nil
}

func (c *pgConn) startTLS(p pgURL) error {
	req := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), 80877103)
	if _, err := c.conn.Write(req); err != nil {
		return err
	}
	b, err := c.r.ReadByte()
	if err != nil {
		return err
	}
	if b != 'S' {
		if p.sslmode == "" || p.sslmode == "prefer" {
			return nil
		}
		return errors.New("the server does not offer TLS, and sslmode asks for it")
	}
	host, _, _ := net.SplitHostPort(p.host)
	tc := tls.Client(c.conn, &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12})
	c.conn, c.r = tc, bufio.NewReader(tc)
	return nil
}

// send writes a message of type typ (0: the startup message, which has none).
func (c *pgConn) send(typ byte, body []byte) error {
	var msg []byte
	if typ != 0 {
		msg = append(msg, typ)
	}
	msg = binary.BigEndian.AppendUint32(msg, uint32(len(body)+4))
	_, err := c.conn.Write(append(msg, body...))
	return err
}

// maxPgMessage bounds a message from the server.
const maxPgMessage = 64 << 20

func (c *pgConn) receive() (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(c.r, head[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n < 4 || n > maxPgMessage {
		return 0, nil, errors.New("malformed message from the server")
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return 0, nil, err
	}
	if head[0] == 'E' {
		return 0, nil, pgError(body)
	}
	return head[0], body, nil
}

// pgServerError is an ErrorResponse: the server refused a statement.
type pgServerError struct{ msg string }

func (e *pgServerError) Error() string { return e.msg }

// pgError describes an ErrorResponse by its code and message.
func pgError(body []byte) error {
	var code, msg string
	for _, f := range strings.Split(string(body), "\x00") {
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case 'C':
			code = f[1:]
		case 'M':
			msg = f[1:]
		}
	}
	return &pgServerError{fmt.Sprintf("the server says: %s (SQLSTATE %s)", msg, code)}
}

func cstr(s string) []byte { return append([]byte(s), 0) }

func (c *pgConn) startup(p pgURL) error {
	body := binary.BigEndian.AppendUint32(nil, 196608) // protocol 3.0
	for _, kv := range [][2]string{{"user", p.user}, {"database", p.database}, {"application_name", "payments-cli"}} {
		body = append(append(body, cstr(kv[0])...), cstr(kv[1])...)
	}
	if err := c.send(0, append(body, 0)); err != nil {
		return err
	}
	var scram *scramState
	for {
		typ, msg, err := c.receive()
		if err != nil {
			return err
		}
		switch typ {
		case 'Z':
			return nil
		case 'R':
			if len(msg) < 4 {
				return errors.New("malformed authentication request")
			}
			if scram, err = c.authenticate(p, binary.BigEndian.Uint32(msg), msg[4:], scram); err != nil {
				return err
			}
		}
	}
}

// authenticate answers one authentication request.
func (c *pgConn) authenticate(p pgURL, kind uint32, data []byte, s *scramState) (*scramState, error) {
	switch kind {
	case 0: // ok
		return s, nil
	case 3: // cleartext
		return s, c.send('p', cstr(p.password))
	case 5: // md5
		if len(data) < 4 {
			return s, errors.New("malformed MD5 request")
		}
		inner := md5.Sum([]byte(p.password + p.user))
		outer := md5.Sum(append([]byte(hex.EncodeToString(inner[:])), data[:4]...))
		return s, c.send('p', cstr("md5"+hex.EncodeToString(outer[:])))
	case 10: // SASL: start SCRAM-SHA-256
		if !strings.Contains(string(data), "SCRAM-SHA-256\x00") {
			return s, errors.New("the server offers no SASL mechanism this command knows (SCRAM-SHA-256)")
		}
		nonce := make([]byte, 18)
		_, _ = rand.Read(nonce)
		s = &scramState{password: p.password, nonce: base64.StdEncoding.EncodeToString(nonce)}
		first := "n,,n=,r=" + s.nonce
		s.clientFirstBare = first[3:]
		body := binary.BigEndian.AppendUint32(cstr("SCRAM-SHA-256"), uint32(len(first)))
		return s, c.send('p', append(body, first...))
	case 11: // SASL continue
		if s == nil {
			return s, errors.New("SASL continue without a start")
		}
		final, err := s.clientFinal(string(data))
		if err != nil {
			return s, err
		}
		return s, c.send('p', []byte(final))
	case 12: // SASL final
		if s == nil || !s.verify(string(data)) {
			return s, errors.New("the server's SCRAM signature does not match: not the server the URL names")
		}
		return s, nil
	}
	return s, fmt.Errorf("the server asks for authentication method %d, which this command does not support", kind)
}

// scramState is one SCRAM-SHA-256 exchange (RFC 5802, RFC 7677).
type scramState struct {
	password, nonce, clientFirstBare string
	salted                           []byte
	authMessage                      string
}

func (s *scramState) clientFinal(serverFirst string) (string, error) {
	attrs := map[byte]string{}
	for _, a := range strings.Split(serverFirst, ",") {
		if len(a) > 2 && a[1] == '=' {
			attrs[a[0]] = a[2:]
		}
	}
	salt, err := base64.StdEncoding.DecodeString(attrs['s'])
	var iter int
	if _, serr := fmt.Sscan(attrs['i'], &iter); err != nil || serr != nil || iter < 1 || iter > 1<<20 ||
		!strings.HasPrefix(attrs['r'], s.nonce) {
		return "", errors.New("malformed SCRAM challenge")
	}
	s.salted, err = pbkdf2.Key(sha256.New, s.password, salt, iter, 32)
	if err != nil {
		return "", err
	}
	withoutProof := "c=biws,r=" + attrs['r']
	s.authMessage = s.clientFirstBare + "," + serverFirst + "," + withoutProof
	clientKey := mac(s.salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	sig := mac(stored[:], s.authMessage)
	for i := range clientKey {
		clientKey[i] ^= sig[i]
	}
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(clientKey), nil
}

func (s *scramState) verify(serverFinal string) bool {
	want := "v=" + base64.StdEncoding.EncodeToString(mac(mac(s.salted, "Server Key"), s.authMessage))
	return s.salted != nil && hmac.Equal([]byte(strings.TrimSpace(serverFinal)), []byte(want))
}

func mac(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// query runs one statement and returns the first column of every row
// (NULL as "").
func (c *pgConn) query(sql string) ([]string, error) {
	if err := c.send('Q', cstr(sql)); err != nil {
		return nil, err
	}
	var out []string
	var failed error
	for {
		typ, msg, err := c.receive()
		var refused *pgServerError
		switch {
		case errors.As(err, &refused):
			failed = err // read on to ReadyForQuery
			continue
		case err != nil:
			return nil, err
		}
		switch typ {
		case 'D':
			if len(msg) < 6 {
				return nil, errors.New("malformed row")
			}
			n := int32(binary.BigEndian.Uint32(msg[2:6]))
			switch {
			case n < 0:
				out = append(out, "")
			case int(n) <= len(msg)-6:
				out = append(out, string(msg[6:6+n]))
			default:
				return nil, errors.New("malformed row")
			}
		case 'Z':
			return out, failed
		}
	}
}

func (c *pgConn) close() {
	_ = c.send('X', nil)
	_ = c.conn.Close()
}
