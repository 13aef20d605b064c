package payments

import "github.com/shopspring/decimal"

// Amount is a money amount in a request's params (PaymentInitiateParams.Amount,
// AmountLimit): a decimal.Decimal, with all its methods, that encoding/json
// writes as a JSON number with its exact digits, as the specification's
// requests take amounts (a decimal.Decimal alone encodes as a JSON string).
// It decodes from a JSON number or string, and encodes with encoding/gob.
// Amounts in responses (Payment, Quote) are decimal.Decimal.
//
//	params.Amount = payments.Amount{Decimal: decimal.RequireFromString("15000.50")}
type Amount struct{ decimal.Decimal }

// MarshalJSON writes the amount as a JSON number: 15000.5, never "15000.5".
// (decimal.Decimal.String, what is written, drops trailing zeros: the value
// is the same.)
func (a Amount) MarshalJSON() ([]byte, error) { return []byte(a.Decimal.String()), nil }
