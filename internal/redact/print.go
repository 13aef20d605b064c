package redact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
// internals) are left out, and a pointer field is printed as what it points
// to.
func FormatFields(f fmt.State, v any) {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	_, _ = io.WriteString(f, "{")
	sep := ""
	for i := range rt.NumField() {
		sf := rt.Field(i)
		if !sf.IsExported() || sf.Anonymous {
			continue
		}
		_, _ = io.WriteString(f, sep+sf.Name+":")
		sep = " "
		if fv := rv.Field(i); fv.Kind() == reflect.Pointer && fv.IsNil() {
			_, _ = io.WriteString(f, "<nil>")
		} else {
			fmt.Fprintf(f, "%+v", reflect.Indirect(fv).Interface())
		}
	}
	_, _ = io.WriteString(f, "}")
}

// LogFields is v, a struct, as a slog group of its exported
// fields, each named by its JSON name (its Go name when it has none), nil
// pointers left out. A field that is itself a slog.LogValuer logs masked.
func LogFields(v any) slog.Value {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	attrs := make([]slog.Attr, 0, rt.NumField())
	for i := range rt.NumField() {
		sf := rt.Field(i)
		fv := rv.Field(i)
		if !sf.IsExported() || sf.Anonymous || fv.Kind() == reflect.Pointer && fv.IsNil() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			name = sf.Name
		}
		attrs = append(attrs, slog.Any(name, reflect.Indirect(fv).Interface()))
	}
	return slog.GroupValue(attrs...)
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
