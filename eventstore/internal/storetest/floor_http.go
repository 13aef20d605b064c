package storetest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/webhook"
)

// EnvFloorHTTP, set to 1, makes the floor benchmarks deliver over HTTP on
// loopback, as the service does: each replica's handler behind an
// httptest.Server of its own, the senders on one keep-alive client with a
// connection per sender to every replica (opened before the timer starts),
// and the latency is the sender's wait, from the request's write to the
// answer's last byte. Unset, the senders call ServeHTTP directly: the
// handler's own time, without the network stack's.
const EnvFloorHTTP = "PAYMENTS_FLOOR_HTTP"

// floorDeliverer delivers bodies to the replicas: prepare signs body and
// builds its request to replica i, outside the timed part; send delivers
// it and returns the answer's status code.
type floorDeliverer interface {
	prepare(i int, body []byte) func() int
	close()
}

// newFloorDeliverer is the delivery path EnvFloorHTTP asks for.
func newFloorDeliverer(b *testing.B, handlers []http.Handler, senders int) floorDeliverer {
	switch v := os.Getenv(EnvFloorHTTP); v {
	case "", "0":
		return directDeliverer(handlers)
	case "1":
		return newHTTPDeliverer(b, handlers, senders)
	default:
		b.Fatalf("%s=%q: want 1 (over HTTP) or unset (ServeHTTP)", EnvFloorHTTP, v)
		return nil
	}
}

// directDeliverer calls the handler's ServeHTTP in the sender's goroutine.
type directDeliverer []http.Handler

func (d directDeliverer) prepare(i int, body []byte) func() int {
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(body, time.Now(), Secret))
	rec := httptest.NewRecorder()
	return func() int {
		d[i].ServeHTTP(rec, req)
		return rec.Code
	}
}

func (directDeliverer) close() {}

// httpDeliverer posts to one loopback server per replica.
type httpDeliverer struct {
	servers []*httptest.Server
	client  *http.Client
}

func newHTTPDeliverer(b *testing.B, handlers []http.Handler, senders int) *httpDeliverer {
	d := &httpDeliverer{client: &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: senders,
		IdleConnTimeout:     time.Minute,
	}}}
	for _, h := range handlers {
		d.servers = append(d.servers, httptest.NewServer(h))
	}
	// Open every sender's connection to every replica now, so that no
	// TCP handshake falls in the run: an unsigned GET each, which a
	// receiver answers without its store.
	var wg sync.WaitGroup
	for _, s := range d.servers {
		for range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := d.client.Get(s.URL + "/webhooks")
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}()
		}
	}
	wg.Wait()
	return d
}

func (d *httpDeliverer) prepare(i int, body []byte) func() int {
	req, err := http.NewRequest(http.MethodPost, d.servers[i].URL+"/webhooks", bytes.NewReader(body))
	if err != nil {
		return func() int { return 0 }
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.SignatureHeader, webhook.SignPayload(body, time.Now(), Secret))
	return func() int {
		resp, err := d.client.Do(req)
		if err != nil {
			return 0 // a failure: "answered 0"
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
}

func (d *httpDeliverer) close() {
	d.client.CloseIdleConnections()
	for _, s := range d.servers {
		s.Close()
	}
}
