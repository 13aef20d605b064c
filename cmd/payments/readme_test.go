package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/internal/readmecheck"
)

// readmeSection returns the section under heading of the guide in docs/
// named file, up to the next one.
func readmeSection(t *testing.T, file, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/" + file)
	require.NoError(t, err)
	sec, ok := readmecheck.Section(string(b), heading)
	require.True(t, ok, "docs/%s has no section %q", file, heading)
	return sec
}

// shellLines returns the lines of the section's sh blocks.
func shellLines(sec string) []string {
	var lines []string
	for _, code := range readmecheck.Code(sec, "sh") {
		lines = append(lines, strings.Split(strings.TrimSuffix(code, "\n"), "\n")...)
	}
	return lines
}

// TestREADMECommands: every payments command the README shows parses as
// it is written (its flags exist and take the values given), and the
// output it shows for listen has the shape listen prints.
func TestREADMECommands(t *testing.T) {
	var cmds int
	var sample []string
	for file, heading := range map[string]string{"cli.md": "## The command-line tool: `payments`", "reconciliation.md": "## When a webhook never arrives"} {
		sec := readmeSection(t, file, heading)
		if heading == "## When a webhook never arrives" {
			// Inline commands: `payments ...`.
			for _, m := range regexp.MustCompile("`(payments [^`]+)`").FindAllStringSubmatch(sec, -1) {
				sample = append(sample, m[1])
			}
		}
		for _, line := range shellLines(sec) {
			switch {
			case strings.HasPrefix(line, "payments "):
				sample = append(sample, line)
			case strings.HasPrefix(line, "go install "):
				assert.Equal(t, "go install github.com/paymentsapi/payments-go/cmd/payments@latest", line)
			}
		}
	}
	for _, line := range sample {
		args := strings.Fields(strings.TrimPrefix(line, "payments "))
		// --help after the README's flags: they are parsed first, and
		// nothing is sent.
		code, stdout, stderr := runCLI(t, nil, append(args, "--help")...)
		assert.Equal(t, exitOK, code, "%s: %s", line, stderr)
		assert.True(t, strings.HasPrefix(stdout, "Usage: payments "+args[0]), line)
		cmds++
	}
	assert.GreaterOrEqual(t, cmds, 6, "the README's commands were not found")

	// The listen session's output lines.
	var attempts int
	attempt := regexp.MustCompile(`^# \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  [a-z_.]+  [0-9a-f-]{36}  --> POST \S+ \[\d{3}\] \d+ms( \(attempt \d of 5(, next in 1s)?\))?$`)
	for _, line := range shellLines(readmeSection(t, "cli.md", "## The command-line tool: `payments`")) {
		if regexp.MustCompile(`^# \d{4}-`).MatchString(line) {
			assert.Regexp(t, attempt, line)
			attempts++
		}
	}
	assert.Equal(t, 2, attempts)
	assert.Equal(t, "1s,2s,4s,8s", defaultRetries, "the README says 1 s, 2 s, 4 s and 8 s, and 5 attempts")
}
