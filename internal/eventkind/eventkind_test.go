package eventkind_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	payments "github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/eventkind"
)

func TestAllInSpecOrder(t *testing.T) {
	want := []payments.EventType{
		"payment.initiated", "payment.completed", "payment.failed", "payment.rejected",
		"virtual_account.payment_received", "virtual_account.created", "virtual_account.updated",
		"recipient.created", "recipient.verified", "recipient.verification_failed",
		"account.balance_low", "account.updated",
	}
	assert.Equal(t, want, eventkind.All())
	got := eventkind.All()
	got[0] = "changed"
	assert.Equal(t, want, eventkind.All(), "the caller's copy does not alias the list")
}

func TestKnown(t *testing.T) {
	assert.True(t, eventkind.Known(payments.EventPaymentCompleted))
	assert.True(t, eventkind.Known(payments.EventAccountUpdated))
	assert.False(t, eventkind.Known("brand.new"))
	assert.False(t, eventkind.Known(""))
}
