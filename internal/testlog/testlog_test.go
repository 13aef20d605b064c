package testlog

import (
	"log/slog"
	"sync"
	"testing"
)

func TestBufferConcurrentWritesAndJSONLines(t *testing.T) {
	var b Buffer
	logger := slog.New(slog.NewJSONHandler(&b, nil))
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			logger.Info("line", "i", i)
			_ = b.String()
		}()
	}
	wg.Wait()
	lines, err := b.JSONLines()
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 20 || lines[0]["msg"] != "line" {
		t.Fatalf("got %d lines: %v", len(lines), lines)
	}
	b.Write([]byte("not json\n"))
	if _, err := b.JSONLines(); err == nil {
		t.Fatal("a line that is not JSON must fail")
	}
}
