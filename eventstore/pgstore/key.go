package pgstore

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"
)

// An event id is whatever the service (or a verifier's header) says, and
// PostgreSQL cannot store every string: a text value holds no NUL byte and
// no invalid UTF-8, and a primary key entry must fit in a btree page (about
// 2.7 kB). Such an id used to fail every statement for good, and its event
// got 503 for ever. Every id is now stored under a key PostgreSQL accepts:
const (
	// maxPlainID is the longest id stored as it is.
	maxPlainID = 256
	// hashedPrefix starts the key of every other id: the prefix and the
	// hex SHA-256 of the id's bytes (71 bytes).
	hashedPrefix = "sha256:"
)

// storedID is the key under which the store records id: the id itself
// when it is valid UTF-8 without NUL, at most maxPlainID bytes, and does
// not start with hashedPrefix; otherwise hashedPrefix and the hex SHA-256
// of its bytes. Two ids get the same key only if SHA-256 collides: a plain
// key never starts with hashedPrefix, a hashed key always does.
func storedID(id string) string {
	if len(id) <= maxPlainID && utf8.ValidString(id) && !strings.ContainsRune(id, 0) && !strings.HasPrefix(id, hashedPrefix) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return hashedPrefix + hex.EncodeToString(sum[:])
}

// maxLoggedID is how much of an id an error message quotes.
const maxLoggedID = 64

// shownID is id as an error message quotes it: cut after maxLoggedID
// bytes, with its length, so that a 100 kB id does not flood the logs.
func shownID(id string) string {
	if len(id) <= maxLoggedID {
		return strconv.Quote(id)
	}
	cut := maxLoggedID
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return strconv.Quote(id[:cut]) + "... (" + strconv.Itoa(len(id)) + " bytes)"
}
