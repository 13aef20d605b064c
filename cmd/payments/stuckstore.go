package main

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	outcomes "github.com/paymentsapi/payments-go/outcome"
)

// openStuckStore returns the outcome store of the receivers at the URL raw
// (pgstore.OutcomeStore over pgx, or redisstore.OutcomeStore over
// go-redis, as the receivers themselves use them) and the function that
// closes its connections. Each statement or command is bounded by timeout.
// No error of it repeats the URL's password.
func openStuckStore(raw, table, prefix string, timeout time.Duration) (outcomes.Store, func(), error) {
	scheme, _, _ := strings.Cut(raw, "://")
	switch scheme {
	case "postgres", "postgresql":
		return openStuckPostgres(raw, table, timeout)
	case "redis", "rediss":
		return openStuckRedis(raw, prefix, timeout)
	case "":
		return nil, nil, usagef("payments stuck: give the store's URL with --store or %s (postgres:// or redis://)", envOutcomeStore)
	case "memory":
		return nil, nil, usagef("payments stuck: a MemoryStore lives inside one process; give the PostgreSQL or Redis store your receivers share")
	default:
		return nil, nil, usagef("payments stuck: --store: scheme %q: give a postgres://, redis:// or rediss:// URL", show(scheme))
	}
}

// openStuckPostgres reads the table with one pgx connection, made when the
// store first queries; the URL's sslmode (pgx's default: prefer) says
// whether TLS is tried or required, and how the server is verified.
func openStuckPostgres(raw, table string, timeout time.Duration) (outcomes.Store, func(), error) {
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		return nil, nil, usagef("payments stuck: --store: %s", redactPassword(err.Error(), raw))
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, nil, usagef("payments stuck: --store: %s", redactPassword(err.Error(), raw))
	}
	s, err := pgstore.NewOutcomeStore(pool, pgstore.WithTable(table), pgstore.WithTimeout(timeout))
	if err != nil {
		pool.Close()
		return nil, nil, usagef("payments stuck: --table %q: lower-case letters, digits and underscores, optionally schema.table (%v)", show(table), err)
	}
	return s, pool.Close, nil
}

// openStuckRedis reads the keys with a go-redis client of one connection,
// bounded by the context's deadline; rediss:// is TLS with the server's
// certificate verified.
func openStuckRedis(raw, prefix string, timeout time.Duration) (outcomes.Store, func(), error) {
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, nil, usagef("payments stuck: --store: not a redis://[user:password@]host:port[/db] URL: %s", redactPassword(err.Error(), raw))
	}
	opts.PoolSize = 1
	opts.ContextTimeoutEnabled = true
	opts.MaxRetries = -1 // one read: an error is reported, not retried
	opts.DialerRetries = 1
	// go-redis logs what it also returns (a failed dial) to stderr: the
	// command prints the error it gets, once.
	redis.SetLogger(quietLog{})
	client := redis.NewClient(opts)
	s, err := redisstore.NewOutcomeStore(client, redisstore.WithPrefix(prefix), redisstore.WithTimeout(timeout))
	if err != nil {
		_ = client.Close()
		return nil, nil, usagef("payments stuck: --prefix: %v", err)
	}
	return s, func() { _ = client.Close() }, nil
}

// redactPassword returns msg with the passwords of the URL raw, if any,
// replaced (the user part's, and pgx's password and sslpassword query
// parameters, as given and as escaped): the drivers' errors are printed,
// and some quote what they parsed.
func redactPassword(msg, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		// The URL does not parse: its user part cannot be found, so
		// nothing of the message is kept but what does not quote it.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			return uerr.Err.Error()
		}
		return "the URL does not parse"
	}
	var secrets []string
	if pw, ok := u.User.Password(); ok {
		secrets = append(secrets, pw)
	}
	for _, name := range []string{"password", "sslpassword"} {
		secrets = append(secrets, u.Query()[name]...)
	}
	for _, pw := range secrets {
		if pw == "" {
			continue
		}
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
		if esc := url.QueryEscape(pw); esc != pw {
			msg = strings.ReplaceAll(msg, esc, "xxxxx")
		}
	}
	return msg
}

// quietLog is go-redis' logger for the command: it drops the lines.
type quietLog struct{}

func (quietLog) Printf(context.Context, string, ...any) {}
