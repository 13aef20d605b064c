package payments_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// BenchmarkScaleControls measures what the retry budget and a rate limiter
// that never makes a call wait cost a successful Payments.Initiate: the
// same call with both off (scale=off), with the default budget
// (scale=budget, what every Client has) and with the budget and
// WithRateLimit at a rate no benchmark reaches (scale=budget+limiter), one
// goroutine (mode=serial) and 64 (mode=parallel). BENCHMARKS.md has the
// figures; compare with benchstat -col /scale.
func BenchmarkScaleControls(b *testing.B) {
	params := benchInitiateParams()
	srv := newBenchServer(b, 200, benchInitiateBody)
	variants := []struct {
		name string
		opts []payments.Option
	}{
		{"scale=off", []payments.Option{payments.WithRetryBudget(nil)}},
		{"scale=budget", nil},
		{"scale=budget+limiter", []payments.Option{payments.WithRateLimit(1e9, 1<<20)}},
	}
	for _, mode := range []string{"serial", "parallel"} {
		for _, v := range variants {
			b.Run("mode="+mode+"/"+v.name, func(b *testing.B) {
				c, err := payments.NewClient(benchKey, append([]payments.Option{payments.WithBaseURL(srv.URL)}, v.opts...)...)
				require.NoError(b, err)
				defer c.Close()
				ctx := context.Background()
				if mode == "serial" {
					benchLoop(b, func() error { _, err := c.Payments.Initiate(ctx, params); return err })
					return
				}
				b.ReportAllocs()
				b.SetParallelism(parallelGoroutines / 2)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := c.Payments.Initiate(ctx, params); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
