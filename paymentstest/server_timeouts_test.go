package paymentstest_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/paymentstest"
)

// closedByServer reports whether the server closes conn by itself. The
// read deadline only bounds a failing test; the server's timeouts under
// test are a hundred times shorter.
func closedByServer(t *testing.T, conn net.Conn, rd io.Reader) bool {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := rd.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return err != nil
}

func TestHTTPTimeoutsCloseIdleConnections(t *testing.T) {
	srv, _ := start(t, paymentstest.WithHTTPTimeouts(paymentstest.HTTPTimeouts{
		ReadHeader: 50 * time.Millisecond, Idle: 50 * time.Millisecond,
	}))
	addr := strings.TrimPrefix(srv.URL(), "http://")

	t.Run("keep-alive after an unauthenticated request", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "POST /payments/initiate HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
		require.NoError(t, err)
		rd := bufio.NewReader(conn)
		resp, err := http.ReadResponse(rd, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		require.False(t, resp.Close, "the server keeps the connection alive")
		assert.True(t, closedByServer(t, conn, rd), "the idle keep-alive connection was closed")
	})
	t.Run("silent connection", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		assert.True(t, closedByServer(t, conn, conn), "a connection that sends nothing was closed")
	})
}

func TestHTTPTimeoutsDefaultKeepsIdleConnections(t *testing.T) {
	srv, _ := start(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /payments/initiate HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
	require.NoError(t, err)
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	_, err = rd.Read(make([]byte, 1))
	var ne net.Error
	assert.True(t, errors.As(err, &ne) && ne.Timeout(), "without Idle the in-process fake keeps the connection, like httptest: %v", err)
}

// TestHTTPTimeoutsWriteLeavesDeliberateWaits: a Write timeout does not
// cut a request that the fake slows down on purpose, nor an admin wait.
func TestHTTPTimeoutsWriteLeavesDeliberateWaits(t *testing.T) {
	slow := stalledReceiver(t)
	srv, c := startAdmin(t, append(fastHooks(slow),
		paymentstest.WithHTTPTimeouts(paymentstest.HTTPTimeouts{Write: 50 * time.Millisecond}))...)
	srv.SetLatency(200 * time.Millisecond)
	createRecipient(t, c, "") // fails with a transport error if the write deadline cut it
	srv.SetLatency(0)
	res := send(t, srv, http.MethodPost, "/_sandbox/deliveries/wait", `{"timeout_seconds": 0.2}`, nil)
	assert.Equal(t, http.StatusGatewayTimeout, res.status, "the wait ran its course: %s", res.body)
}

func TestHTTPTimeoutsRefusesNegative(t *testing.T) {
	for _, to := range []paymentstest.HTTPTimeouts{
		{ReadHeader: -1}, {Read: -1}, {Write: -time.Second}, {Idle: -1},
	} {
		_, err := paymentstest.StartServer(paymentstest.WithHTTPTimeouts(to))
		assert.Error(t, err, "%+v", to)
	}
}
