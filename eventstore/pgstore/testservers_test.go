package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsapi/payments-go/internal/testservers"
)

// The throwaway servers of internal/testservers, checked with this module's
// driver (the root module requires no driver).
//
// The servers answer, survive a stop and a start with their data, and
// their URLs are printed without the password.
func TestPostgresStopStart(t *testing.T) {
	p := testservers.StartPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	query := func(sql string) error {
		c, err := pgx.Connect(ctx, p.URL())
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, sql)
		return err
	}
	if err := query("CREATE TABLE kept (id int)"); err != nil {
		t.Fatal(err)
	}
	p.Stop(t)
	if err := query("SELECT 1"); err == nil {
		t.Fatal("a stopped server answered")
	}
	p.Start(t)
	if err := query("SELECT * FROM kept"); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	if p.Password() == "" || strings.Contains(p.Redacted(), p.Password()) {
		t.Fatalf("Redacted() = %q shows the password", p.Redacted())
	}
}
