package redisstore

import "strings"

// The layout of keys: the key of an event is the key prefix (built from
// the store's prefix) and then the event id, escaped, so that no two
// (prefix, id) pairs share a key.
//
// An escaped id holds no ':': '%' becomes "%25" and ':' becomes "%3A"
// (ids as the service makes them, such as "evt_..." or a UUID, have
// neither and are kept as they are). A key prefix ends with ':', and is
// the prefix itself when that ends with ':' and holds no '%' (the
// default prefix does); any other prefix is escaped the same way and
// followed by "%:". So the last ':' of a key ends its key prefix, and a
// key prefix holds a '%' exactly when it was escaped: both halves, and so
// the pair, read back from the key alone.

// keyPrefix returns the key prefix of the store's prefix p.
func keyPrefix(p string) string {
	if strings.HasSuffix(p, ":") && !strings.Contains(p, "%") {
		return p
	}
	return escape(p) + "%:"
}

// escape replaces '%' with "%25" and ':' with "%3A", and keeps every other
// byte.
func escape(s string) string {
	if !strings.ContainsAny(s, "%:") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '%':
			b.WriteString("%25")
		case ':':
			b.WriteString("%3A")
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// Key returns the key that holds eventID's claim or completion: the
// prefix and the id, as described in the package documentation (Keys).
// With the default prefix, the key of an id without ':' or '%' is
// DefaultPrefix followed by the id.
func (s *ClaimStore) Key(eventID string) string { return s.keyPrefix + escape(eventID) }
