package payments

import (
	"context"
	"net/http"
	"time"
)

// VirtualAccount is a bank account opened on demand to receive money. Money
// paid into it is credited to the merchant's main account.
type VirtualAccount struct {
	apiResource

	ID       string `json:"id"`
	Currency string `json:"currency"`
	// AccountNumber is the generated, unique number to share with customers.
	AccountNumber string    `json:"account_number"`
	AccountName   string    `json:"account_name"`
	BankName      string    `json:"bank_name"`
	IsActive      bool      `json:"is_active"`
	CreatedAt     time.Time `json:"created_at"`
}

// VirtualAccountCreateParams describe the holder of a new virtual account.
// AccountType, AccountName and a valid Email are required; FirstName and
// LastName are required for individual accounts, and an 11-digit BVN for
// Nigerian accounts (Metadata.Country "NG", "NGA" or "Nigeria"). The BVN is
// personal data: the printed and logged forms of these params hide it.
type VirtualAccountCreateParams struct {
	AccountType  AccountType             `json:"account_type"`
	AccountName  string                  `json:"account_name"`
	Email        string                  `json:"email"`
	FirstName    string                  `json:"first_name,omitempty"`
	LastName     string                  `json:"last_name,omitempty"`
	DisplayName  string                  `json:"display_name,omitempty"`
	BVN          string                  `json:"bvn,omitempty"`
	MobileNumber string                  `json:"mobile_number,omitempty"`
	Metadata     *VirtualAccountMetadata `json:"metadata,omitempty"`
}

// VirtualAccountMetadata is optional information about a virtual account.
type VirtualAccountMetadata struct {
	BusinessRegNumber string `json:"business_reg_number,omitempty"`
	// Country is a country code; "NG" makes the BVN required.
	Country string `json:"country,omitempty"`
	UseCase string `json:"use_case,omitempty"`
	// Reference is your own reference for the account.
	Reference string `json:"reference,omitempty"`
}

// VirtualAccountsService opens virtual accounts. Reach it as
// Client.VirtualAccounts.
type VirtualAccountsService struct{ client *Client }

// Create opens a virtual account (POST /accounts/virtual-accounts). The
// specification gives this operation no Idempotency-Key, so the call is
// retried only when you pass WithIdempotencyKey: without one, a failure after
// the request left may or may not have opened an account.
func (s *VirtualAccountsService) Create(ctx context.Context, params *VirtualAccountCreateParams, opts ...RequestOption) (*VirtualAccount, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	va := new(VirtualAccount)
	err := s.client.call(ctx, &call{method: http.MethodPost, path: "/accounts/virtual-accounts", body: params, out: va}, opts)
	if err != nil {
		return nil, err
	}
	return va, nil
}
