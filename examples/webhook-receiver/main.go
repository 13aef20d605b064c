// Command webhook-receiver is a complete webhook endpoint for the Payments
// API, ready to copy into a merchant's service. It verifies each delivery's
// signature, processes each event once, and answers so that the service
// retries what failed.
//
// Configuration comes from the environment:
//
//	PAYMENTS_WEBHOOK_SECRET  the endpoint's signing secret (required); while a
//	                         secret rotates, give both, comma-separated
//	PAYMENTS_WEBHOOK_ADDR    the address to listen on (default ":8080")
//
// Run it, point the dashboard's webhook URL at https://<your host>/webhooks,
// and send a test event with client.Webhooks.Trigger:
//
//	PAYMENTS_WEBHOOK_SECRET=whsec_... go run ./examples/webhook-receiver
//
// cmd/payments-sandbox delivers to http://localhost:8080/webhooks by
// default, so the two meet as they are: export the PAYMENTS_WEBHOOK_SECRET
// line the sandbox prints, then run this program.
//
// Deduplication uses the SDK's in-memory store, which is private to this
// process: if you run several replicas, give NewWebhookHandler a shared
// payments.EventStore (see its documentation) with WithEventStore.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	payments "github.com/paymentsapi/payments-go"
)

const defaultAddr = ":8080"

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))

	secrets := parseSecrets(os.Getenv("PAYMENTS_WEBHOOK_SECRET"))
	if len(secrets) == 0 {
		fmt.Fprintln(os.Stderr, "webhook-receiver: PAYMENTS_WEBHOOK_SECRET is not set: set it to the endpoint's signing secret from the dashboard (two secrets, comma-separated, while rotating)")
		os.Exit(2)
	}
	addr := os.Getenv("PAYMENTS_WEBHOOK_ADDR")
	if addr == "" {
		addr = defaultAddr
	}

	handler, err := newMux(secrets, logger)
	if err != nil {
		logger.Error("configuration", slog.String("error", err.Error()))
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = serve(ctx, addr, handler, logger)
	stop()
	if err != nil {
		logger.Error("webhook-receiver stopped", slog.String("error", err.Error()))
		os.Exit(1)
	}
}

// parseSecrets splits a comma-separated list of secrets, dropping blanks.
func parseSecrets(env string) []string {
	var secrets []string
	for _, s := range strings.Split(env, ",") {
		if s = strings.TrimSpace(s); s != "" {
			secrets = append(secrets, s)
		}
	}
	return secrets
}

// newMux routes /webhooks to the SDK's receiver and /healthz to a liveness
// probe.
func newMux(secrets []string, logger *slog.Logger) (http.Handler, error) {
	verifier, err := payments.NewSignatureVerifier(secrets)
	if err != nil {
		return nil, err
	}
	r := &receiver{logger: logger}
	mux := http.NewServeMux()
	// Registered without a method so that the SDK's handler answers other
	// methods itself (405 with Allow: POST).
	mux.Handle("/webhooks", payments.NewWebhookHandler(verifier, r.handle,
		payments.WithHandlerLogger(logger), // refusals and failures, never secrets or bodies
	))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	return mux, nil
}

// serve listens on addr, logs "listening" once the port is bound (so the
// log never announces a port that another program holds), and serves until
// ctx ends; then it lets the deliveries in flight finish (up to 20 seconds)
// before returning.
func serve(ctx context.Context, addr string, handler http.Handler, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (set PAYMENTS_WEBHOOK_ADDR to another address): %w", addr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second, // longer than the slowest event processing
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("listening", slog.String("addr", ln.Addr().String()), slog.String("path", "/webhooks"))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// receiver holds what the event processing needs: in a real service, your
// database and queues.
type receiver struct {
	logger *slog.Logger
}

// handle processes one verified event. The SDK calls it once per event id:
// return nil once the event is fully handled, or an error to have the
// service deliver it again later. Keep it quick; hand slow work to a queue.
//
// Only ids, kinds, references and amounts are logged here: never account
// numbers, names or whole payloads.
func (r *receiver) handle(ctx context.Context, ev *payments.Event) error {
	log := r.logger.With(slog.String("event_id", ev.ID), slog.String("event_type", string(ev.Type)))

	switch ev.Type {
	case payments.EventPaymentCompleted, payments.EventPaymentFailed, payments.EventPaymentRejected, payments.EventPaymentInitiated:
		p, err := ev.Payment()
		if err != nil {
			return err // logged by the SDK; the service will retry
		}
		log.InfoContext(ctx, "payment event", slog.String("reference", p.Reference),
			slog.String("status", string(p.Status)), slog.String("amount", p.Amount.String()), slog.String("currency", p.Currency))
		// Your code: find the order by p.Reference; on payment.completed mark
		// it paid, on payment.failed or payment.rejected release it. Do it in
		// one transaction that also records ev.ID, so a crash between your
		// commit and this handler's answer cannot apply it twice.

	case payments.EventVirtualAccountPaymentReceived:
		vp, err := ev.VirtualAccountPayment()
		if err != nil {
			return err
		}
		log.InfoContext(ctx, "money received", slog.String("virtual_account_id", vp.VirtualAccountID),
			slog.String("reference", vp.Reference), slog.String("amount", vp.Amount.String()), slog.String("currency", vp.Currency))
		// Your code: credit the customer who owns vp.VirtualAccountID with
		// vp.Amount (a decimal.Decimal: never convert money to float).

	case payments.EventVirtualAccountCreated, payments.EventVirtualAccountUpdated:
		va, err := ev.VirtualAccount()
		if err != nil {
			return err
		}
		log.InfoContext(ctx, "virtual account event", slog.String("virtual_account_id", va.ID), slog.Bool("active", va.IsActive))
		// Your code: store or refresh the account you show to the customer.

	case payments.EventRecipientCreated, payments.EventRecipientVerified, payments.EventRecipientVerificationFailed:
		rc, err := ev.Recipient()
		if err != nil {
			return err
		}
		log.InfoContext(ctx, "recipient event", slog.String("recipient_id", rc.ID))
		// Your code: allow payouts to rc.ID once verified; ask the user to
		// check the bank details when verification failed.

	case payments.EventAccountBalanceLow, payments.EventAccountUpdated:
		log.WarnContext(ctx, "account event") // the data's shape is not specified: ev.DecodeData into your own type
		// Your code: alert the finance team, top up the balance.

	default:
		// A kind this program does not know yet. Acknowledge it (return nil)
		// so the service does not retry it forever; ev.RawJSON() has it all.
		log.WarnContext(ctx, "unhandled event kind")
	}
	return nil
}
