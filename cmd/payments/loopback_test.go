package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	// A test-only import of the root module's internal package: the copy is
	// run beside it, and it is never linked into the command.
	"github.com/paymentsapi/payments-go/internal/loopback"
)

// TestLoopbackCopy: loopbackHost, the command's copy of internal/loopback,
// answers as the original does on every host of the original's table.
func TestLoopbackCopy(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
		why  string
	}{
		// The name localhost, in any ASCII case.
		{"localhost", true, "the name"},
		{"LOCALHOST", true, "host names are case-insensitive"},
		{"LocalHost", true, "host names are case-insensitive"},

		// Loopback addresses.
		{"127.0.0.1", true, "IPv4 loopback"},
		{"127.0.0.2", true, "all of 127.0.0.0/8 is loopback"},
		{"127.255.255.255", true, "the end of 127.0.0.0/8"},
		{"::1", true, "IPv6 loopback"},
		{"0:0:0:0:0:0:0:1", true, "IPv6 loopback, written in full"},
		{"::ffff:127.0.0.1", true, "IPv4-mapped 127.0.0.1"},
		{"::ffff:7f00:2", true, "IPv4-mapped 127.0.0.2, in hex"},
		{"[::1]", true, "a Host header's IPv6 literal without a port"},
		{"[::ffff:127.0.0.1]", true, "bracketed IPv4-mapped loopback"},

		// Not loopback.
		{"", false, "no host: as a listen address, every interface"},
		{"0.0.0.0", false, "unspecified: every interface"},
		{"::", false, "unspecified: every interface"},
		{"[::]", false, "unspecified, bracketed"},
		{"128.0.0.1", false, "just past 127.0.0.0/8"},
		{"126.255.255.255", false, "just before 127.0.0.0/8"},
		{"10.0.0.5", false, "a private address"},
		{"192.168.1.10", false, "a private address"},
		{"::2", false, "not ::1"},
		{"fe80::1", false, "IPv6 link-local"},
		{"64:ff9b::7f00:1", false, "NAT64 of 127.0.0.1 goes through a gateway"},
		{"example.com", false, "another name"},
		{"receiver", false, "a name the resolver decides"},

		// A port: the caller splits it off.
		{"localhost:8080", false, "host with port"},
		{"127.0.0.1:8080", false, "host with port"},
		{"[::1]:8080", false, "host with port"},
		{"::1:8080", false, "not an address"},

		// Brackets: a matched pair around an IPv6 address only.
		{"[::1", false, "unmatched bracket"},
		{"::1]", false, "unmatched bracket"},
		{"[[::1]]", false, "doubled brackets"},
		{"[127.0.0.1]", false, "brackets around an IPv4 address"},
		{"[localhost]", false, "brackets around a name"},
		{"[]", false, "empty brackets"},

		// Other names for this machine: up to the resolver.
		{"localhost.", false, "trailing dot"},
		{"LOCALHOST.", false, "trailing dot"},
		{"localhost..", false, "two trailing dots"},
		{"app.localhost", false, "a name under .localhost"},
		{"localhost.localdomain", false, "a resolver's alias"},
		{"localhost.example.com", false, "a look-alike prefix"},
		{"localhost6", false, "some hosts files' alias"},
		{"ip6-localhost", false, "some hosts files' alias"},
		{"localhoſt", false, "U+017F, which Unicode case folding equates with s"},
		{"LOCALHOſT", false, "U+017F, upper case"},
		{"ｌｏｃａｌｈｏｓｔ", false, "fullwidth letters"},
		{" localhost", false, "a leading space"},
		{"localhost ", false, "a trailing space"},
		{"localhost\x00", false, "a NUL"},
		{"localhos", false, "a prefix of localhost"},

		// IPv4 spellings net.ParseIP refuses.
		{"127.1", false, "short form"},
		{"2130706433", false, "one decimal number"},
		{"0x7f.0.0.1", false, "hex"},
		{"0x7f000001", false, "hex"},
		{"0177.0.0.1", false, "octal (leading zero)"},
		{"127.0.0.01", false, "leading zero"},
		{"127.0.0.1.", false, "trailing dot: a name"},
		{"127.0.0.1.nip.io", false, "a name that embeds the address"},
		{" 127.0.0.1", false, "a leading space"},

		// IPv6 zones.
		{"::1%lo", false, "a zone"},
		{"::1%25lo", false, "a URL-escaped zone"},
		{"[::1%lo]", false, "a bracketed zone"},
	} {
		assert.Equal(t, tc.want, loopbackHost(tc.host), "%q: %s", tc.host, tc.why)
		assert.Equal(t, loopback.Host(tc.host), loopbackHost(tc.host), "%q: the copy and internal/loopback differ: change both together", tc.host)
	}
}
