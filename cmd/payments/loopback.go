package main

// This file is a copy of the root module's internal/loopback/loopback.go
// (Host here is loopbackHost): this module is released on its own, so it
// keeps a copy instead of importing another module's internal package
// (TestNoInternalImportAcrossModules, in the root module). TestLoopbackCopy
// runs the two on the same hosts.

import (
	"net"
	"strings"
)

// loopbackHost reports whether host can reach this machine only: the name
// localhost, in any ASCII case, or a loopback IP address (127.0.0.0/8,
// ::1, or an IPv4-mapped IPv6 form of 127.0.0.0/8 such as
// ::ffff:127.0.0.1).
//
// host is written without a port, as url.URL.Hostname and
// net.SplitHostPort return it. An IPv6 address may also be in brackets, as
// a Host header without a port writes it ("[::1]"); brackets around
// anything else, or brackets that do not match, are not a loopback host.
//
// Everything else is false, so that a caller that refuses a non-loopback
// host refuses it. In particular:
//   - "" and the unspecified addresses 0.0.0.0 and ::, which as a listen
//     address mean every interface;
//   - a host with its port ("localhost:8080", "[::1]:8080"): split the port
//     off first;
//   - other names for this machine ("localhost.", "app.localhost",
//     "localhost.localdomain") and non-ASCII look-alikes of localhost
//     (Unicode case folding takes U+017F, "ſ", for "s"): whether they reach
//     this machine is up to the resolver;
//   - IPv4 spellings that net.ParseIP refuses ("127.1", "0x7f.0.0.1",
//     "0177.0.0.1", "127.0.0.1."), which some resolvers read as other
//     addresses or send to DNS as names;
//   - an IPv6 address with a zone ("::1%lo0").
func loopbackHost(host string) bool {
	if inner, ok := strings.CutPrefix(host, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok || !strings.Contains(inner, ":") {
			return false
		}
		host = inner
	}
	if isLocalhost(host) {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isLocalhost reports whether s is "localhost" in any ASCII case. Unlike
// strings.EqualFold it folds ASCII letters only.
func isLocalhost(s string) bool {
	const name = "localhost"
	if len(s) != len(name) {
		return false
	}
	for i := range len(name) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}
