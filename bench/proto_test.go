package bench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o600) }

func frame(payload string) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(payload)))
	b.WriteString(payload)
	return b.Bytes()
}

func TestFrames(t *testing.T) {
	var b bytes.Buffer
	w := newFrameWriter(&b)
	in := &message{Type: msgStart, Start: &startMsg{Deadline: 42}}
	if err := w.write(in); err != nil {
		t.Fatal(err)
	}
	if err := w.write(&message{Type: msgError, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	r := newFrameReader(&b)
	m, err := r.read()
	if err != nil || m.Type != msgStart || m.Start.Deadline != 42 || m.V != protoVersion {
		t.Fatalf("read %+v, %v", m, err)
	}
	if m, err = r.read(); err != nil || m.Error != "boom" {
		t.Fatalf("read %+v, %v", m, err)
	}
	if _, err = r.read(); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

func TestFramesBad(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  error
		msg   string
	}{
		{"other version", frame(`{"v":99,"type":"start"}`), errProto, "version 99"},
		{"not json", frame(`hello`), errProto, ""},
		{"empty frame", frame(""), errProto, "0 bytes"},
		{"huge frame", []byte{0xff, 0xff, 0xff, 0xff}, errProto, "bytes"},
		{"truncated", frame(`{"v":1,"type":"start"}`)[:10], io.ErrUnexpectedEOF, ""},
		{"truncated header", []byte{0, 0}, io.ErrUnexpectedEOF, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newFrameReader(bytes.NewReader(tt.input)).read()
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %v containing %q", err, tt.want, tt.msg)
			}
		})
	}
}
