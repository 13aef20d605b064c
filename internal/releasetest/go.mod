module github.com/paymentsapi/payments-go/internal/releasetest

go 1.26.0

require golang.org/x/mod v0.42.0
