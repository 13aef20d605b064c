package testservers_test

import (
	"os"
	"testing"

	"github.com/paymentsapi/payments-go/internal/testservers"
)

func TestMain(m *testing.M) { os.Exit(testservers.Main(m)) }

func TestSharedServersAreShared(t *testing.T) {
	pg1, pg2 := testservers.SharedPostgres(t), testservers.SharedPostgres(t)
	if pg1 != pg2 && os.Getenv(testservers.EnvPostgresURL) == "" {
		t.Error("two shared PostgreSQL servers")
	}
	r1, r2 := testservers.SharedRedis(t), testservers.SharedRedis(t)
	if r1 != r2 && os.Getenv(testservers.EnvRedisURL) == "" {
		t.Error("two shared Redis servers")
	}
	if pg1.URL() != pg2.URL() || r1.URL() != r2.URL() {
		t.Error("the shared servers' URLs differ between calls")
	}
}
