module github.com/paymentsapi/payments-go

go 1.24

require (
	github.com/google/uuid v1.6.0
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/shopspring/decimal v1.6.0
)

require github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
