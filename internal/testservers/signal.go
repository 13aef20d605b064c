package testservers

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// processTree returns pid and every descendant of it, found in /proc: the
// processes of one server, which the tests started.
func processTree(pid int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the process has gone
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 {
			continue
		}
		child, err1 := strconv.Atoi(strings.TrimSpace(s[:strings.IndexByte(s, ' ')]))
		parent, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			children[parent] = append(children[parent], child)
		}
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}

// signalAll sends sig to every process of pids; the first must exist.
func signalAll(pids []int, sig syscall.Signal) error {
	for i, p := range pids {
		if err := syscall.Kill(p, sig); err != nil && i == 0 {
			return fmt.Errorf("signal %v to the server (pid %d): %w", sig, p, err)
		}
	}
	return nil
}
