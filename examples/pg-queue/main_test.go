package main

import (
	"testing"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
)

// The pool has a connection for every worker and more, unless
// DATABASE_URL says how many it wants.
func TestPoolConfigHasRoomForTheWorkers(t *testing.T) {
	cfg, err := poolConfig("postgres://u@localhost:5432/db")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns < int32(pgstore.DefaultWorkers+8) {
		t.Errorf("MaxConns %d, want at least %d (the workers and 8 more)", cfg.MaxConns, pgstore.DefaultWorkers+8)
	}
	cfg, err = poolConfig("postgres://u@localhost:5432/db?pool_max_conns=5")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != 5 {
		t.Errorf("MaxConns %d, want DATABASE_URL's 5", cfg.MaxConns)
	}
}
