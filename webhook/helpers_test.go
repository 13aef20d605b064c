package webhook_test

import (
	"fmt"
	"testing"

	payments "github.com/paymentsapi/payments-go"
)

// The event id most tests deliver.
const whEventID = "6a1f3c2e-9b4d-4e8a-b7c6-5d4e3f2a1b0c"

// whEventJSON builds an event body around data (raw JSON, or "" for none).
func whEventJSON(id string, typ payments.EventType, data string) []byte {
	if data == "" {
		return []byte(fmt.Sprintf(`{"id":%q,"event":%q,"created_at":"2024-05-01T10:00:00Z"}`, id, typ))
	}
	return []byte(fmt.Sprintf(`{"id":%q,"event":%q,"created_at":"2024-05-01T10:00:00Z","data":%s}`, id, typ, data))
}

// benchLoop runs do b.N times, reporting allocations.
func benchLoop(b *testing.B, do func() error) {
	b.ReportAllocs()
	for b.Loop() {
		if err := do(); err != nil {
			b.Fatal(err)
		}
	}
}
