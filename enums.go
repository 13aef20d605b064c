package payments

// AccountType says whether a recipient or virtual account belongs to a person
// or a company. Values the SDK does not know are passed through unchanged.
type AccountType string

// Account types defined by the specification.
const (
	AccountTypeIndividual AccountType = "individual"
	AccountTypeBusiness   AccountType = "business"
)

// Known reports whether t is one of the account types the specification lists.
func (t AccountType) Known() bool {
	return t == AccountTypeIndividual || t == AccountTypeBusiness
}

// PaymentStatus is the state of a payment. The specification shows only
// "pending"; the other constants follow the payment event names. Values the SDK
// does not know are passed through unchanged.
type PaymentStatus string

// Payment statuses. Only PaymentStatusPending is published by the
// specification; the rest mirror the payment.* event kinds.
const (
	PaymentStatusPending   PaymentStatus = "pending"
	PaymentStatusCompleted PaymentStatus = "completed"
	PaymentStatusFailed    PaymentStatus = "failed"
	PaymentStatusRejected  PaymentStatus = "rejected"
)

// IdentificationType names the kind of identity document attached to a
// recipient. The specification gives passport and national_id as examples;
// other values are sent as given.
type IdentificationType string

// Identification types named by the specification.
const (
	IdentificationPassport   IdentificationType = "passport"
	IdentificationNationalID IdentificationType = "national_id"
)
