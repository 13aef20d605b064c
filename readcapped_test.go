package payments

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func TestReadCapped(t *testing.T) {
	const limit = 1000
	body := bytes.Repeat([]byte("0123456789"), 150) // 1500 bytes
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		r       func() io.Reader
		size    int64
		want    int
		wantErr error
	}{
		{"announced", func() io.Reader { return bytes.NewReader(body[:700]) }, 700, 700, nil},
		{"unknown length", func() io.Reader { return bytes.NewReader(body[:700]) }, -1, 700, nil},
		{"announced too short", func() io.Reader { return bytes.NewReader(body[:700]) }, 10, 700, nil},
		{"announced too long", func() io.Reader { return bytes.NewReader(body[:700]) }, 900, 700, nil},
		{"one byte at a time", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body[:700])) }, 700, 700, nil},
		{"data with EOF", func() io.Reader { return iotest.DataErrReader(bytes.NewReader(body[:700])) }, 700, 700, nil},
		{"empty", func() io.Reader { return bytes.NewReader(nil) }, 0, 0, nil},
		{"exactly the limit", func() io.Reader { return bytes.NewReader(body[:limit]) }, limit, limit, nil},
		{"one over the limit", func() io.Reader { return bytes.NewReader(body[:limit+1]) }, limit + 1, limit, errBodyTooLarge},
		{"over the limit, unknown length", func() io.Reader { return bytes.NewReader(body) }, -1, limit, errBodyTooLarge},
		{"over the limit, announced", func() io.Reader { return bytes.NewReader(body) }, int64(len(body)), limit, errBodyTooLarge},
		{"error midway", func() io.Reader { return io.MultiReader(bytes.NewReader(body[:300]), iotest.ErrReader(boom)) }, 700, 300, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readCapped(tc.r(), tc.size, limit)
			if !errors.Is(err, tc.wantErr) || !bytes.Equal(got, body[:tc.want]) {
				t.Fatalf("got %d bytes, %v; want %d bytes, %v", len(got), err, tc.want, tc.wantErr)
			}
		})
	}
}
