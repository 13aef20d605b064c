module github.com/paymentsapi/payments-go/internal/releasetest

go 1.24

require golang.org/x/mod v0.27.0
