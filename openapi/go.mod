module github.com/paymentsapi/payments-go/openapi

go 1.25

require (
	github.com/getkin/kin-openapi v0.153.0
	github.com/google/uuid v1.6.0
	github.com/paymentsapi/payments-go v0.2.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/shopspring/decimal v1.6.0
	golang.org/x/text v0.14.0
)

require (
	github.com/go-openapi/jsonpointer v0.22.5 // indirect
	github.com/go-openapi/swag/jsonname v0.25.5 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	go.yaml.in/yaml/v4 v4.0.0 // indirect
	golang.org/x/time v0.12.0 // indirect
)

replace github.com/paymentsapi/payments-go => ../
