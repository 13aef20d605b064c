package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/paymentsapi/payments-go/eventstore/pgstore"
	"github.com/paymentsapi/payments-go/eventstore/redisstore"
	"github.com/paymentsapi/payments-go/webhook"
)

// storeStartTimeout bounds connecting to the store (and creating its table)
// at start-up: a database out of reach stops the program with an error
// rather than leaving it to answer 503 to every delivery.
const storeStartTimeout = 30 * time.Second

// openStore opens the store that remembers processed event ids, and
// returns it with the function that closes its connections. Its errors name
// the store by its redacted URL and never contain the password.
func openStore(ctx context.Context, sc storeConfig, logger *slog.Logger) (webhook.ClaimStore, func(), error) {
	ctx, cancel := context.WithTimeout(ctx, storeStartTimeout)
	defer cancel()
	var (
		store    webhook.ClaimStore
		closeFn  func()
		err      error
		database string
	)
	switch sc.kind {
	case "postgres":
		database = "PostgreSQL"
		store, closeFn, err = openPostgres(ctx, sc.url, logger)
	case "redis":
		database = "Redis"
		store, closeFn, err = openRedis(ctx, sc.url)
	default:
		// Private to this process: a redelivery that reaches another
		// replica would be processed again. Run one replica only.
		logger.Info("claim store", slog.String("kind", "memory"))
		return webhook.NewMemoryClaimStore(webhook.DefaultMemoryClaimStoreSize), func() {}, nil
	}
	if err != nil {
		// Only the text: a driver's error value might quote the password.
		return nil, nil, errors.New(mask(fmt.Sprintf("%s=%s (%s): %v", envStore, sc.redacted, database, err), sc.secrets))
	}
	logger.Info("claim store", slog.String("kind", sc.kind), slog.String("url", sc.redacted))
	return store, func() {
		closeFn()
		logger.Info("claim store closed", slog.String("kind", sc.kind))
	}, nil
}

// openPostgres opens a pool and creates the table of processed ids when it
// is missing (pgstore's Migrate: the role needs CREATE on the schema the
// first time, or a DBA applies pgstore's MigrationSQL by hand).
func openPostgres(ctx context.Context, url string, logger *slog.Logger) (webhook.ClaimStore, func(), error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	store, err := pgstore.NewClaimStore(pool, pgstore.WithLogger(logger))
	if err == nil {
		err = store.Migrate(ctx) // also proves the database is reachable
	}
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	// For writes to this database exactly once, with a function that
	// may take seconds, see pgstore's Queue and examples/pg-queue.
	return store, pool.Close, nil
}

// openRedis connects to a single Redis server. For Sentinel or Cluster,
// give redisstore.NewClaimStore a redis.NewFailoverClient or redis.NewClusterClient
// (any redis.UniversalClient) instead.
func openRedis(ctx context.Context, url string) (webhook.ClaimStore, func(), error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, nil, err
	}
	// The store gives every command a deadline; with this the client
	// keeps it itself (go-redis otherwise waits out its ReadTimeout).
	opts.ContextTimeoutEnabled = true
	// Fail now, not at the first delivery, with the dial's own error: the
	// client the store uses keeps dialling (RetryDial), which would turn a
	// Redis that is not there into a timeout.
	probe := redis.NewClient(opts)
	err = probe.Ping(ctx).Err()
	_ = probe.Close()
	if err != nil {
		return nil, nil, err
	}
	// Dials keep trying, so the client is back at once after a Redis
	// restart, before a claim's lease runs out.
	opts.Dialer = redisstore.RetryDial(redis.NewDialer(opts))
	client := redis.NewClient(opts)
	store, err := redisstore.NewClaimStore(client)
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	return store, func() { _ = client.Close() }, nil
}

// mask replaces every secret in text.
func mask(text string, secrets []string) string {
	for _, s := range secrets {
		text = strings.ReplaceAll(text, s, "xxxxx")
	}
	return text
}
