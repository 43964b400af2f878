package report

import (
	"strings"
	"unicode"
)

// Strings in summary.md and compare's Markdown come from result.json,
// sweep.json and folder names: data, which a user (or a hostile file) can
// fill with Markdown or HTML. They are escaped so that they render as the
// text they are: no heading, list, link, image, emphasis, table cell or
// raw HTML can come out of them. report.html escapes through html/template.
// Control characters (an ESC in a device name) are escaped for every
// output at once, where it is written: see internal/safetext.

// mdText escapes s for Markdown text, tables included: every character
// that can start markup is backslash-escaped (CommonMark allows that for
// any ASCII punctuation), what could open a block at the start of a line is
// escaped there, and line breaks become spaces.
func mdText(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch r {
		case '\\', '`', '*', '[', ']', '<', '>', '|', '~', '&', '!':
			b.WriteByte('\\')
		case ':':
			// GFM makes links of http://... and mailto:...; a colon
			// elsewhere is plain.
			if next(rs, i, "//") || prevWord(rs, i, "mailto") || prevWord(rs, i, "xmpp") {
				b.WriteByte('\\')
			}
		case '@':
			// and of a@b.c.
			if i > 0 && i < len(rs)-1 && isWord(rs[i-1]) && isWord(rs[i+1]) {
				b.WriteByte('\\')
			}
		case '_':
			// Intraword underscores cannot emphasise (unreg_last stays
			// readable in the source); at a word's edge they can.
			if i == 0 || i == len(rs)-1 || !isWord(rs[i-1]) || !isWord(rs[i+1]) {
				b.WriteByte('\\')
			}
		case '-', '+', '=', '#':
			// What opens a list, a heading or a setext underline opens it
			// only at the start of a line.
			if i == 0 {
				b.WriteByte('\\')
			}
		case '.', ')':
			// "1. " or "1) " at the start would open an ordered list, and
			// www. is a link in GFM.
			if leadingDigits(rs[:i]) && (i == len(rs)-1 || rs[i+1] == ' ' || rs[i+1] == '\t') ||
				r == '.' && prevWord(rs, i, "www") {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

// next says whether rs continues with s after index i.
func next(rs []rune, i int, s string) bool {
	return strings.HasPrefix(string(rs[i+1:]), s)
}

// prevWord says whether the word before index i ends with w (any case).
func prevWord(rs []rune, i int, w string) bool {
	n := len([]rune(w))
	return i >= n && strings.EqualFold(string(rs[i-n:i]), w)
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func leadingDigits(rs []rune) bool {
	if len(rs) == 0 {
		return false
	}
	for _, r := range rs {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// mdCode writes s as an inline code span: a fence of more backticks than
// any run inside s, so s cannot close it; line breaks become spaces. In a
// code span nothing is markup, HTML included. (Not for table cells: there
// a | would still end the cell.)
func mdCode(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || longest > 0 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
