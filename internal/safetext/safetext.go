// Package safetext renders control characters as visible escapes (ESC as
// \x1b), for every output a person reads: the terminal, summary.md,
// report.html. What xrcbench prints is partly data it does not choose:
// device and driver names from libibverbs, host and CPU names from the
// kernel, folder names, result.json as anyone may have edited it. An
// escape sequence in a device name would otherwise reach the terminal
// (recolour it, retitle the window, rewrite the line above) or a CI job
// summary; a right-to-left override would reorder what the reader sees.
package safetext

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line is s with every control character escaped, line breaks and tabs
// included: for one value (a name) on one line.
func Line(s string) string { return escape(s, false) }

// Text is s with every control character escaped but for line breaks
// (\n) and tabs: for a whole document or message.
func Text(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch {
		case r == utf8.RuneError && n == 1:
			esc = `\x` + hex2(s[i])
		case keepLines && (r == '\n' || r == '\t'):
		case r < 0x20 || r == 0x7f:
			esc = `\x` + hex2(byte(r))
		case isControl(r):
			esc = `\u` + strconv.FormatInt(int64(r)|0x10000, 16)[1:]
		}
		if esc != "" {
			b.WriteString(s[done:i])
			b.WriteString(esc)
			done = i + n
		}
		i += n
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// isControl: the C1 controls (0x9b is CSI to a terminal in 8-bit mode),
// the line and paragraph separators, and the bidirectional formatting
// characters that reorder text on screen ("Trojan Source").
func isControl(r rune) bool {
	return r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 || r == 0x061c || r == 0x200e || r == 0x200f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// Writer passes everything written to it through Text: the boundary
// where a command's stdout and stderr leave for the terminal.
type Writer struct{ w io.Writer }

// NewWriter wraps w; a Writer given again is returned as it is.
func NewWriter(w io.Writer) *Writer {
	if sw, ok := w.(*Writer); ok {
		return sw
	}
	return &Writer{w}
}

// Write writes p escaped, and counts p as written when all of it was. A
// character cut in two by the writes is escaped byte by byte: the
// command's writes are whole lines.
func (w *Writer) Write(p []byte) (int, error) {
	s := string(p)
	e := Text(s)
	if e == s {
		return w.w.Write(p)
	}
	if _, err := io.WriteString(w.w, e); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap is the writer underneath: the live progress display draws on
// the terminal itself, with escape sequences of its own.
func (w *Writer) Unwrap() io.Writer { return w.w }
