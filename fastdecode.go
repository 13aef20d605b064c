package payments

import (
	"bytes"
	"encoding/json"
)

// The one-pass decoder of a success envelope. The general decoder (Client.decode)
// reads the envelope with data as raw JSON, then decodes data into the
// resource: encoding/json then validates and walks the data bytes four times.
// decodeFast decodes the envelope and the resource in one json.Unmarshal, and
// finds the raw bytes of data (kept as Response.RawData and RawJSON) with a
// plain byte scan. It takes only the plain case, and leaves every other one
// (an error envelope, data missing or null, a malformed body) to the general
// decoder, which gives exactly the same result for the plain case.

// fastEnvelope is envelope without the members of an error answer, with
// data decoded straight into the call's out.
type fastEnvelope struct {
	Success *bool  `json:"success"`
	Message string `json:"message"`
	Stan    string `json:"stan"`
	Data    any    `json:"data"`
}

// decodeFast decodes a 2xx answer in one pass and reports whether it could.
// It may have written to cl.out when it returns false, so it is used only
// for an out made for this call (cl.outIsNew), which the caller discards on
// error.
func decodeFast(cl *call, r *Response, raw []byte) bool {
	if !cl.outIsNew || cl.out == nil {
		return false
	}
	data, ok := topLevelData(raw)
	if !ok || bytes.Equal(data, nullJSON) {
		return false
	}
	env := fastEnvelope{Data: cl.out}
	wd, wired := cl.out.(wireDecoder)
	if wired {
		env.Data = wd.newWire()
	}
	if json.Unmarshal(raw, &env) != nil || (env.Success != nil && !*env.Success) || env.Data == nil {
		return false
	}
	if wired && wd.fromWire(env.Data, data) != nil {
		return false
	}
	r.Stan, r.Message = env.Stan, env.Message
	r.RawData = data
	if res, ok := cl.out.(resource); ok {
		res.setResponse(r, data)
	}
	cl.resp = r
	return true
}

var nullJSON = []byte("null")

// wireDecoder is a resource whose UnmarshalJSON decodes into a wire form
// and then finishes from it (Payment, for its quote shapes). decodeFast
// does the same inside the envelope, so that the resource's bytes are
// decoded in the envelope's single pass rather than handed to
// UnmarshalJSON, which encoding/json would first scan again.
type wireDecoder interface {
	newWire() any
	fromWire(wire any, raw []byte) error
}

// unmarshalResource is json.Unmarshal(b, r), without the second scan of b
// that encoding/json makes before calling a wireDecoder's UnmarshalJSON.
func unmarshalResource(b []byte, r resource) error {
	wd, ok := r.(wireDecoder)
	if !ok {
		return json.Unmarshal(b, r)
	}
	w := wd.newWire()
	if err := json.Unmarshal(b, w); err != nil {
		return err
	}
	return wd.fromWire(w, b)
}

// topLevelData returns the value of the "data" member of the JSON object b,
// as encoding/json would see it. It does not validate b (json.Unmarshal does
// that next) but never reads out of bounds; ok is false for anything but a
// plain object with one "data" member and keys without escapes or non-ASCII
// bytes, so that no other key can stand for "data" (encoding/json matches
// keys without regard to case).
func topLevelData(b []byte) (data []byte, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		end := skipString(b, i)
		if end < 0 {
			return nil, false
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return nil, false
		}
		switch {
		case string(key) == "data":
			if data != nil {
				return nil, false // twice: encoding/json would merge both
			}
			data = b[i:vend]
		case !plainASCII(key) || bytes.EqualFold(key, []byte("data")):
			return nil, false
		}
		i = skipSpace(b, vend)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		return data, data != nil && i < len(b) && b[i] == '}'
	}
	return nil, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i], or
// -1 when it does not end.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index just past the value that starts at b[i], or -1.
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			if i = skipString(b, i); i < 0 || depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	if depth == 0 {
		return i
	}
	return -1
}

// unquoteJSON is json.Unmarshal(b, &s) for the JSON string literal b,
// without encoding/json when the literal is printable ASCII with nothing to
// unescape (ids, event names, timestamps).
func unquoteJSON(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		in := b[1 : len(b)-1]
		if !bytes.ContainsFunc(in, func(r rune) bool { return r < 0x20 || r == '"' || r == '\\' || r >= 0x7f }) {
			return string(in), nil
		}
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

func plainASCII(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}
