package safetext

import (
	"bytes"
	"testing"
)

func TestEscape(t *testing.T) {
	tests := []struct{ name, in, line, text string }{
		{"plain", "xbfake0 µs — ×", "xbfake0 µs — ×", "xbfake0 µs — ×"},
		{"empty", "", "", ""},
		{"ESC sequence", "mlx5_\x1b[31m0", `mlx5_\x1b[31m0`, `mlx5_\x1b[31m0`},
		{"window title", "d\x1b]0;pwn\a", `d\x1b]0;pwn\x07`, `d\x1b]0;pwn\x07`},
		{"line breaks", "a\nb\tc\rd", `a\x0ab\x09c\x0dd`, "a\nb\tc\\x0dd"},
		{"DEL and NUL", "a\x7f\x00", `a\x7f\x00`, `a\x7f\x00`},
		{"C1 CSI", "a\u009b31m", `a\u009b31m`, `a\u009b31m`},
		{"8-bit CSI, not UTF-8", "a\x9b31m", `a\x9b31m`, `a\x9b31m`},
		{"right-to-left override", "abc\u202edcb", `abc\u202edcb`, `abc\u202edcb`},
		{"a real U+FFFD stays", "a\ufffdb", "a\ufffdb", "a\ufffdb"},
		{"cut rune", "a\xe2\x80", `a\xe2\x80`, `a\xe2\x80`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if got := Text(tt.in); got != tt.text {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
			}
		})
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if NewWriter(w) != w {
		t.Error("a Writer wrapped twice")
	}
	in := "device xb\x1b[2Jx0\n"
	n, err := w.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	if got, want := buf.String(), "device xb\\x1b[2Jx0\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if w.Unwrap() != &buf {
		t.Error("Unwrap is not the writer underneath")
	}
}
