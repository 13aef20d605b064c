package payments

import (
	"fmt"
	"log/slog"

	"github.com/paymentsapi/payments-go/internal/redact"
)

// mask hides personal data in printed values: it keeps no character of s,
// only whether it was set.
func mask(s string) string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// scrub masks the client's API key in text the service sent that is logged
// as received (the stan): a service or proxy that echoes the key must not
// put it in a log line.
func (c *Client) scrub(s string) string { return redact.Secrets(s, c.apiKey) }

// String prints the identification with its number and image hidden.
func (i Identification) String() string {
	return fmt.Sprintf("{Type:%s Number:%s Image:%s}", i.Type, mask(i.Number), mask(i.Image))
}

// GoString prints the identification with its number and image hidden.
func (i Identification) GoString() string { return i.String() }

// LogValue logs the identification with its number and image hidden.
func (i Identification) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("type", string(i.Type)),
		slog.String("number", mask(i.Number)),
		slog.String("image", mask(i.Image)),
	)
}

// String prints the params with the identification number hidden.
func (p RecipientUpdateParams) String() string {
	p.IdentificationNumber = mask(p.IdentificationNumber)
	type plain RecipientUpdateParams
	return fmt.Sprintf("%+v", plain(p))
}

// GoString prints the params with the identification number hidden.
func (p RecipientUpdateParams) GoString() string { return p.String() }
