// Package printcheck is the tests' proof that no printed or logged value of
// an SDK type shows a secret (the API key, a webhook signing secret) or
// personal data: it prints a value every way fmt and log/slog can (every
// verb, by value and by pointer, in a slice and in a map, slog's text and
// JSON handlers) and looks for the secret in each text, as is and in the
// encodings a verb may turn it into (hex, Go quoting, the decimal bytes of
// %v of a []byte, base64 of encoding/json). Fill makes a value of any type
// whose every text member carries a given string, and Types lists the types
// an api/ snapshot names, so that a test covers every exported type.
package printcheck

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// Verbs are the fmt verbs every value is printed with.
var Verbs = []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x", "%X"}

// Forms returns v printed every way: with each of Verbs, fmt.Sprint and
// Sprintln; by value and by pointer (as *v when v is a pointer, unless only
// the pointer has a Format method; &v when it is not); as the one element of a slice and a map; and through slog's text
// and JSON handlers (by value and by pointer; a slice or a map only through
// the text handler, since the JSON handler writes a slice's elements with
// encoding/json, which keeps every value whole by design). The keys name
// the form.
func Forms(v any) map[string]string {
	out := map[string]string{}
	rv := reflect.ValueOf(v)
	values := map[string]reflect.Value{"": rv}
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		// A type that prints by pointer alone (its Format has a pointer
		// receiver: it holds a lock, and is never used by value) is not
		// printed by value.
		if !rv.Type().Implements(formatterType) || rv.Elem().Type().Implements(formatterType) {
			values["*"] = rv.Elem()
		}
	} else if rv.IsValid() && rv.Kind() != reflect.Pointer {
		p := reflect.New(rv.Type())
		p.Elem().Set(rv)
		values["&"] = p
	}
	for how, x := range values {
		if !x.CanInterface() {
			continue
		}
		xi := x.Interface()
		for _, verb := range Verbs {
			out[how+verb] = fmt.Sprintf(verb, xi)
		}
		out[how+"Sprint"] = fmt.Sprint(xi)
		out[how+"Sprintln"] = fmt.Sprintln(xi)
		out[how+"slog text"] = logged(slog.NewTextHandler, xi)
		out[how+"slog json"] = logged(slog.NewJSONHandler, xi)

		s := reflect.MakeSlice(reflect.SliceOf(x.Type()), 1, 1)
		s.Index(0).Set(x)
		m := reflect.MakeMap(reflect.MapOf(reflect.TypeFor[string](), x.Type()))
		m.SetMapIndex(reflect.ValueOf("k"), x)
		for kind, c := range map[string]reflect.Value{"[]": s, "map": m} {
			for _, verb := range Verbs {
				out[kind+how+verb] = fmt.Sprintf(verb, c.Interface())
			}
			out[kind+how+"slog text"] = logged(slog.NewTextHandler, c.Interface())
		}
	}
	return out
}

// logged is v logged as the attribute v by a logger on the handler
// newHandler makes.
func logged[H slog.Handler](newHandler func(w io.Writer, opts *slog.HandlerOptions) H, v any) string {
	var b bytes.Buffer
	slog.New(newHandler(&b, nil)).Info("value", "v", v)
	return b.String()
}

// Encodings returns the forms in which s may show in printed text: as is,
// Go-quoted (without the quotes), hex in both cases, the decimal bytes fmt
// prints for a []byte, and the parts of its base64 that do not depend on
// what stands before it.
func Encodings(s string) []string {
	q := strconv.Quote(s)
	out := []string{s, q[1 : len(q)-1], hex.EncodeToString([]byte(s)), strings.ToUpper(hex.EncodeToString([]byte(s))),
		strings.Trim(fmt.Sprint([]byte(s)), "[]")}
	if len(s) >= 12 {
		for k := range 3 {
			e := base64.StdEncoding.EncodeToString(append(make([]byte, k), s...))
			if k > 0 {
				e = e[4:]
			}
			out = append(out, e[:len(e)-4])
		}
	}
	return out
}

// Check fails t for every form of v (Forms) that shows any of secrets in
// any of its Encodings, naming the form.
func Check(t testing.TB, name string, v any, secrets ...string) {
	t.Helper()
	encodings := make([][]string, len(secrets))
	for i, secret := range secrets {
		encodings[i] = Encodings(secret)
	}
	for how, text := range Forms(v) {
		for i, secret := range secrets {
			for _, enc := range encodings[i] {
				if strings.Contains(text, enc) {
					t.Errorf("%s printed as %s shows %q (as %q):\n%s", name, how, secret, enc, text)
					break
				}
			}
		}
	}
}

// Fill sets every exported member of *p that holds text to s, recursively:
// strings (named string types included), byte slices, string slices and maps
// (an http.Header gets s under every name in headerNames and under s
// itself), errors (errors.New(s)), and it makes one element of every other
// slice and map and a value for every nil pointer to a struct, filled the
// same way. Numbers, booleans, times and amounts stay as they are, and so do
// unexported fields, functions, channels and interfaces other than error.
func Fill(p any, s string) {
	fill(reflect.ValueOf(p).Elem(), s, 0)
}

// HeaderNames are the headers Fill sets in an http.Header: the ones that
// carry credentials, and ordinary ones a service or a proxy may echo a
// value into.
var HeaderNames = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key",
	"Payments-Signature", "Webhook-Signature", "Webhook-Id", "X-Request-Id", "X-Echo", "Location", "Link",
	"Content-Type", "Idempotency-Key", "Idempotent-Replayed", "Retry-After", "Www-Authenticate", "Via", "Warning"}

var (
	formatterType = reflect.TypeFor[fmt.Formatter]()
	errorType     = reflect.TypeFor[error]()
	headerType    = reflect.TypeFor[http.Header]()
)

func fill(v reflect.Value, s string, depth int) {
	if depth > 6 || !v.CanSet() {
		return
	}
	t := v.Type()
	switch {
	case t == headerType:
		h := http.Header{s: {s}}
		for _, n := range HeaderNames {
			h[n] = []string{s}
		}
		v.Set(reflect.ValueOf(h))
		return
	case t == errorType:
		v.Set(reflect.ValueOf(errors.New(s)))
		return
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(s))
			return
		}
		sl := reflect.MakeSlice(t, 1, 1)
		fill(sl.Index(0), s, depth+1)
		v.Set(sl)
	case reflect.Map:
		m := reflect.MakeMap(t)
		k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		fill(k, s, depth+1)
		fill(e, s, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct {
			if v.IsNil() {
				v.Set(reflect.New(t.Elem()))
			}
			fill(v.Elem(), s, depth+1)
		}
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				fill(v.Field(i), s, depth+1)
			}
		}
	}
}

// Types returns the names of the types the api/ snapshot file declares, as
// "pkg.Name" (pkg is the package clause's name).
func Types(t testing.TB, snapshot string) []string {
	t.Helper()
	f, err := os.Open(snapshot)
	if err != nil {
		t.Fatalf("printcheck: %v", err)
	}
	defer f.Close()
	var pkg string
	var names []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "package "); ok {
			pkg, _, _ = strings.Cut(rest, " ")
		}
		rest, ok := strings.CutPrefix(line, "type ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		if !seen[name] {
			seen[name] = true
			names = append(names, pkg+"."+name)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("printcheck: %v", err)
	}
	return names
}

// Covered fails t for each type the snapshot names that table has no entry
// for, and each entry of table that the snapshot does not name: a new
// exported type fails the test until it is printed there too.
func Covered[V any](t testing.TB, snapshot string, table map[string]V) {
	t.Helper()
	declared := map[string]bool{}
	for _, name := range Types(t, snapshot) {
		declared[name] = true
		if _, ok := table[name]; !ok {
			t.Errorf("%s (in %s) has no value to print: add it to the table", name, snapshot)
		}
	}
	pkg := ""
	for name := range declared {
		pkg, _, _ = strings.Cut(name, ".")
		break
	}
	for name := range table {
		if p, _, _ := strings.Cut(name, "."); p == pkg && !declared[name] {
			t.Errorf("%s is in the table but not in %s", name, snapshot)
		}
	}
}

// Shaped secrets and personal data, as a value masks them without knowing
// them: a JWT (the form of the specification's API keys), both forms of a
// webhook signing secret, and personal data.
const (
	JWT         = "eyJhbGciOiJIUzI1NiJ9.eyJtZXJjaGFudCI6ImVjaG8ifQ.c2lnbmF0dXJlLW9mLWVjaG8"
	Whsec       = "whsec_ZWNoby1zZWNyZXQtb2YtdGhpcnR5LXR3by1ieXRlcw=="
	HexSecret   = "6563686f2d7061796d656e74732d7369676e61747572652d736563726574"
	Account     = "0123456789"
	BVN         = "22233344455"
	Email       = "ada.echo@merchant.example"
	Mobile      = "+2348012345678"
	MerchantKey = "sk_live_Echo0Key9Zq7WxLp" // an API key of no particular shape
)

// Echoes are the values a table's text members are set to, one at a time
// (see All).
var Echoes = []string{JWT, Whsec, HexSecret, Account, BVN, Email, Mobile}

// All checks that every type the snapshots name has values in table
// (Covered), then, for each of Echoes, that no value of table(echo) prints
// echo or any of held (the secrets the table's clients, stores and servers
// hold themselves).
func All(t *testing.T, snapshots []string, table func(t *testing.T, echo string) map[string][]any, held ...string) {
	t.Helper()
	names := table(t, "x")
	for _, snapshot := range snapshots {
		Covered(t, snapshot, names)
	}
	for _, echo := range Echoes {
		t.Run(echo, func(t *testing.T) {
			for name, values := range table(t, echo) {
				for _, v := range values {
					Check(t, name, v, append([]string{echo}, held...)...)
				}
			}
		})
	}
}
