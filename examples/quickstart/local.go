package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/paymentstest"
	"github.com/paymentsapi/payments-go/webhook"
)

// local is the fake service running in this process, with a webhook
// receiver that verifies every delivery the way a merchant's would.
type local struct {
	client   *payments.Client
	srv      *paymentstest.Server
	receiver *http.Server

	mu     sync.Mutex
	events []string // verified deliveries not yet printed
}

func startLocal(out io.Writer) (*local, error) {
	l := &local{}
	secret := "whsec_" + uuid.NewString()

	// The receiver: the SDK's handler checks the signature, drops duplicates
	// and calls us once per event.
	verifier, err := webhook.NewSignatureVerifier([]string{secret})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the webhook receiver: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks", webhook.NewHandler(verifier, l.onEvent))
	l.receiver = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = l.receiver.Serve(ln) }()
	hookURL := "http://" + ln.Addr().String() + "/webhooks"

	// The service: stateful, over real loopback HTTP, signing its webhooks.
	l.srv = paymentstest.NewServer(
		paymentstest.WithWebhook(paymentstest.Webhook{URL: hookURL, Secrets: []string{secret},
			Retries: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}}),
	)
	l.client, err = payments.NewClient(l.srv.APIKey(),
		payments.WithBaseURL(l.srv.URL()),
		payments.WithUserAgent("quickstart-example"),
	)
	if err != nil {
		l.close()
		return nil, err
	}
	fmt.Fprintln(out, "No PAYMENTS_API_KEY is set: running against the in-process fake service (package paymentstest).")
	fmt.Fprintf(out, "   service   %s\n", l.srv.URL())
	fmt.Fprintf(out, "   webhooks  %s (signed by the service, verified by webhook.NewHandler)\n", hookURL)
	return l, nil
}

func (l *local) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if l.srv != nil {
		l.srv.Close()
	}
	_ = l.receiver.Shutdown(ctx)
}

// onEvent is the merchant's webhook logic: here, note what arrived.
func (l *local) onEvent(_ context.Context, ev *payments.Event) error {
	line := fmt.Sprintf("%-34s verified, event %s", ev.Type, ev.ID)
	switch {
	case ev.Type == payments.EventVirtualAccountPaymentReceived:
		p, err := ev.VirtualAccountPayment()
		if err != nil {
			return err
		}
		line += fmt.Sprintf(": %s %s from %s", p.Amount.StringFixed(2), p.Currency, p.Payer.Name)
	case ev.Type == payments.EventPaymentCompleted || ev.Type == payments.EventPaymentRejected:
		p, err := ev.Payment()
		if err != nil {
			return err
		}
		line += fmt.Sprintf(": payment %s, %s %s", p.Status, p.Amount.StringFixed(2), p.Currency)
	}
	l.mu.Lock()
	l.events = append(l.events, line)
	l.mu.Unlock()
	return nil
}

// received waits for the fake to finish its deliveries and returns what the
// receiver verified since the last call.
func (l *local) received(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := l.srv.WaitForDeliveries(ctx); err != nil {
		return []string{"(deliveries still pending: " + err.Error() + ")"}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

// payIn plays a customer transferring money into a virtual account.
func (l *local) payIn(accountNumber string, amount decimal.Decimal, currency string) (paymentstest.IncomingPayment, error) {
	in, err := l.srv.SimulateIncomingPayment(accountNumber, amount, currency)
	if err != nil {
		return in, errors.New("simulate an incoming payment: " + err.Error())
	}
	return in, nil
}
