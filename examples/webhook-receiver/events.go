package main

import (
	"context"
	"log/slog"

	payments "github.com/paymentsapi/payments-go"
)

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
			slog.String("status", string(p.Status)), slog.String("amount", p.Amount.StringFixed(2)), slog.String("currency", p.Currency))
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
			slog.String("reference", vp.Reference), slog.String("amount", vp.Amount.StringFixed(2)), slog.String("currency", vp.Currency))
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
