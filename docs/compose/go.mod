module github.com/paymentsapi/payments-go/docs/compose

go 1.24

replace github.com/paymentsapi/payments-go => ../..

require go.yaml.in/yaml/v3 v3.0.5
