package outcometest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/paymentsapi/payments-go/outcome"
)

// ChildEnv names the environment variable that makes a test binary run as
// the waiting process of AwaitInChild; its value is the key to await.
const ChildEnv = "PAYMENTS_OUTCOME_AWAIT_CHILD"

// AwaitInChild starts this test binary again as a second process running
// only childTest, with env added and ChildEnv set to key, and waits until
// the child says it is waiting. It returns a function that waits for the
// child's answer: "<state> <event id>" or "error: ...".
func AwaitInChild(t *testing.T, childTest, key string, env ...string) func() string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+childTest+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), env...), ChildEnv+"="+key)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "outcome-child: "); ok {
				lines <- line
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	if line := <-lines; line != "waiting" {
		_ = cmd.Wait()
		t.Fatalf("the child process said %q, want waiting", line)
	}
	return func() string {
		line, ok := <-lines
		_ = cmd.Wait()
		if !ok {
			return "error: the child process said nothing"
		}
		return line
	}
}

// RunChild is the body of the child's test: it awaits the key of ChildEnv
// on tr, printing "waiting" once its first read is done, and then the
// result. It does nothing when ChildEnv is not set (a normal run).
func RunChild(t *testing.T, tr func() *outcome.Tracker) {
	key := os.Getenv(ChildEnv)
	if key == "" {
		t.Skip("runs only as the child process of an Await test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tracker := tr()
	if _, err := tracker.Get(ctx, key); err == nil {
		fmt.Println("outcome-child: error: the outcome was there before the delivery")
		return
	}
	fmt.Println("outcome-child: waiting")
	res, err := tracker.Await(ctx, key)
	if err != nil {
		fmt.Printf("outcome-child: error: %v\n", err)
		return
	}
	fmt.Printf("outcome-child: %s %s\n", res.State, res.EventID)
}
