package surprise

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func names(obj string) ([]string, bool) {
	var got []string
	ok := Members([]byte(obj), func(n, v []byte) bool {
		got = append(got, string(n)+"="+string(v))
		return true
	})
	return got, ok
}

func TestMembers(t *testing.T) {
	got, ok := names(` { "a" : 1 , "b":"x,}\"y", "c":{"d":[1,{"e":"]"}]}, "f":[ ], "g":null,"h":true } `)
	assert.True(t, ok)
	assert.Equal(t, []string{`a=1`, `b="x,}\"y"`, `c={"d":[1,{"e":"]"}]}`, `f=[ ]`, `g=null`, `h=true`}, got)
	got, ok = names(`{}`)
	assert.True(t, ok)
	assert.Empty(t, got)
	for _, bad := range []string{``, `[]`, `"a"`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1`, `{"a":"x`, `{"a":[1}`, `{a:1}`} {
		_, ok := names(bad)
		assert.False(t, ok, bad)
	}
	assert.Equal(t, `2`, string(Member([]byte(`{"Data":1,"data":2}`), "data")), "the last member wins, in any case")
	assert.Nil(t, Member([]byte(`{"x":1}`), "data"))
}

func TestString(t *testing.T) {
	s, ok := String([]byte(`"processing"`))
	assert.True(t, ok)
	assert.Equal(t, "processing", s)
	for _, v := range []string{`1`, `null`, `"a\"b"`, `"`} {
		_, ok := String([]byte(v))
		assert.False(t, ok, v)
	}
}

func TestSetFirstOnceAndBounded(t *testing.T) {
	var s Set
	var wg sync.WaitGroup
	var mu sync.Mutex
	firsts := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.First("unknown_field", "data.x") {
				mu.Lock()
				firsts++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, firsts)
	assert.True(t, s.First("unknown_field", "data.y"), "another detail is another surprise")
	for i := range MaxRemembered {
		s.First("k", fmt.Sprint(i))
	}
	assert.False(t, s.First("k", "one too many"), "past the bound nothing is new")
}

func TestClean(t *testing.T) {
	assert.Equal(t, "a?b?c", Clean("a\nb\u00e9c"))
	long := Clean(strings.Repeat("x", 200))
	assert.Equal(t, strings.Repeat("x", 80)+"...", long)
}

// FuzzMembers: Members never panics, and on valid JSON objects it sees the
// members encoding/json sees.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"b":[1,"}"]},"c":"\\\""}`, `{`, `{"a":[`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := 0
		ok := Members([]byte(s), func(_, _ []byte) bool { n++; return true })
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &m) == nil && m != nil && strings.HasPrefix(strings.TrimSpace(s), "{") {
			if !ok {
				t.Fatalf("%q: a valid object was not walked", s)
			}
			if n < len(m) {
				t.Fatalf("%q: %d members seen, encoding/json has %d", s, n, len(m))
			}
		}
	})
}
