package redact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
)

// The printed (fmt) and logged (slog) forms of the SDK's values. A type
// that keeps the SDK's internals (the raw body of a resource) has a Format
// method handing itself to FormatFields, so that every verb (%v, %+v, %#v,
// %s) shows its exported fields alone; personal data in those fields masks
// itself (payments.AccountNumber, payments.PersonalData). A type whose
// personal data is a plain string hands a masked copy of itself to
// FormatFields and LogFields.

// FormatFields writes v, a struct, the way fmt's %+v writes a struct,
// {A:a B:b}, whatever the verb. Unexported fields (the SDK's
// internals) and embedded functions (APIResource) are left out, an embedded
// struct prints under its type's name, and a pointer field is printed as what it points
// to. Every field's text is masked: the given secrets and anything shaped
// like a credential (Text) in all of them, and, in text fields (strings,
// byte slices, string slices and maps), account-number-like digits too
// (String), so that a value the service echoed into any member (the API key,
// a webhook secret, an account number) does not print. Numbers, amounts and
// times print whole.
func FormatFields(f fmt.State, v any, secrets ...string) {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	_, _ = io.WriteString(f, "{")
	sep := ""
	for i := range rt.NumField() {
		sf := rt.Field(i)
		if !sf.IsExported() || sf.Anonymous && sf.Type.Kind() == reflect.Func {
			continue
		}
		_, _ = io.WriteString(f, sep+sf.Name+":")
		sep = " "
		if fv := rv.Field(i); fv.Kind() == reflect.Pointer && fv.IsNil() {
			_, _ = io.WriteString(f, "<nil>")
		} else {
			_, _ = io.WriteString(f, fieldText(reflect.Indirect(fv), secrets))
		}
	}
	_, _ = io.WriteString(f, "}")
}

// fieldText is a field's printed text, masked.
func fieldText(fv reflect.Value, secrets []string) string {
	x := fv.Interface()
	if h, ok := x.(http.Header); ok {
		return fmt.Sprintf("%v", Header(h, secrets...))
	}
	if err, ok := x.(error); ok && !fv.Type().Implements(formatterType) {
		return String(err.Error(), nil, secrets...)
	}
	if isText(fv) {
		if b, ok := x.([]byte); ok || fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Uint8 {
			if !ok {
				b = fv.Bytes()
			}
			return String(string(b), nil, secrets...)
		}
		return String(fmt.Sprintf("%+v", x), nil, secrets...)
	}
	return Text(fmt.Sprintf("%+v", x), secrets...)
}

var (
	formatterType = reflect.TypeFor[fmt.Formatter]()
	logValuerType = reflect.TypeFor[slog.LogValuer]()
)

// isText reports whether a field holds text from outside that is not a type
// of its own that masks itself: a string, bytes, or a slice or map of them.
func isText(fv reflect.Value) bool {
	t := fv.Type()
	if t.Implements(formatterType) || t.Implements(logValuerType) {
		return false
	}
	switch t.Kind() {
	case reflect.String:
		return true
	case reflect.Slice:
		k := t.Elem().Kind()
		return k == reflect.Uint8 || k == reflect.String
	case reflect.Array:
		return t.Elem().Kind() == reflect.String
	case reflect.Map:
		return t.Elem().Kind() == reflect.String || t.Elem().Kind() == reflect.Slice && t.Elem().Elem().Kind() == reflect.String
	}
	return false
}

// Text returns s with the given secrets and anything shaped like a
// credential (a bearer token, a JWT, a whsec_ secret, 32 hex digits and
// more) masked, and control characters escaped (Clean); digits are left
// whole. For the printed text of a whole value, whose amounts must stay.
func Text(s string, secrets ...string) string {
	if s == "" {
		return s
	}
	return Clean(tokens(secretsOnly(s, secrets)))
}

// Formatted writes s to f masked by String, whatever the verb: the Format
// of a type that prints as text of its own (an error's message).
func Formatted(f fmt.State, s string, secrets ...string) {
	_, _ = io.WriteString(f, String(s, nil, secrets...))
}

// sensitiveNames are parts of the names of headers whose values are
// credentials.
var sensitiveNames = []string{"auth", "key", "secret", "token", "signature", "cookie", "password", "credential", "session"}

// SensitiveHeader reports whether a header's value is a credential, by its
// name: Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key,
// anything naming a key, a secret, a token or a signature.
func SensitiveHeader(name string) bool {
	name = strings.ToLower(name)
	for _, s := range sensitiveNames {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// Header returns a copy of h to print or log: the values of sensitive
// headers (SensitiveHeader) masked whole, the others with the given secrets,
// anything shaped like a credential and account-number-like digits masked
// (String). Names are cleaned of control characters.
func Header(h http.Header, secrets ...string) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, vals := range h {
		masked := make([]string, len(vals))
		for i, v := range vals {
			if SensitiveHeader(name) {
				masked[i] = Mask(v)
			} else {
				masked[i] = String(v, nil, secrets...)
			}
		}
		out[String(name, nil, secrets...)] = masked
	}
	return out
}

// LogFields is v, a struct, as a slog group of its exported
// fields, each named by its JSON name (its Go name when it has none), nil
// pointers left out. Each value is masked as FormatFields masks it; a field
// that is itself a slog.LogValuer logs as it says, with the given secrets
// masked in it too.
func LogFields(v any, secrets ...string) slog.Value {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	attrs := make([]slog.Attr, 0, rt.NumField())
	for i := range rt.NumField() {
		sf := rt.Field(i)
		fv := rv.Field(i)
		if !sf.IsExported() || sf.Anonymous && sf.Type.Kind() == reflect.Func || fv.Kind() == reflect.Pointer && fv.IsNil() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			name = sf.Name
		}
		fv = reflect.Indirect(fv)
		var val slog.Value
		if isText(fv) {
			val = slog.StringValue(fieldText(fv, secrets))
		} else {
			val = Value(slog.AnyValue(fv.Interface()), secrets...)
		}
		attrs = append(attrs, slog.Attr{Key: name, Value: val})
	}
	return slog.GroupValue(attrs...)
}

// Value returns v resolved (LogValuers called) with the given secrets,
// anything shaped like a credential and, in strings, account-number-like
// digits masked, in every string and group member. A slice or a map logs as
// its printed text (fmt: its elements' Format), masked. A value of another
// kind is left as it is unless its printed text carries a secret, then it
// logs as that text masked.
func Value(v slog.Value, secrets ...string) slog.Value {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.StringValue(String(v.String(), nil, secrets...))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]slog.Attr, len(attrs))
		for i, a := range attrs {
			out[i] = slog.Attr{Key: Text(a.Key, secrets...), Value: Value(a.Value, secrets...)}
		}
		return slog.GroupValue(out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case []byte:
			return slog.StringValue(String(string(x), nil, secrets...))
		case http.Header:
			return slog.AnyValue(Header(x, secrets...))
		case error:
			return slog.StringValue(String(x.Error(), nil, secrets...))
		}
		text := fmt.Sprintf("%+v", v.Any())
		switch t := reflect.TypeOf(v.Any()); t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			// slog's JSON handler would write the elements with
			// encoding/json, whole: they log as printed, masked.
			if t.Elem().Implements(formatterType) {
				return slog.StringValue(Text(text, secrets...))
			}
			return slog.StringValue(String(text, nil, secrets...))
		}
		if Text(text, secrets...) != text {
			return slog.StringValue(Text(text, secrets...))
		}
	}
	return v
}

// Err returns err, or, when its text carries a secret, a bearer token or
// characters that could forge a log line, an error with that text masked.
func Err(err error, secret string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := String(msg, nil, secret); clean != msg {
		se := &scrubbedError{msg: clean}
		for _, ctxErr := range []error{context.DeadlineExceeded, context.Canceled} {
			if errors.Is(err, ctxErr) {
				se.ctxErr = ctxErr
			}
		}
		return se
	}
	return err
}

// scrubbedError stands in for an error whose text had to be masked. It keeps
// only the context's error, when that was the cause, for errors.Is.
type scrubbedError struct {
	msg    string
	ctxErr error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.ctxErr }
