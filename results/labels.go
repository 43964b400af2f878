package results

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Labels name what a run was of, beyond its configuration: a firmware
// build, a board, a ticket. They are free text chosen by the user, so
// they are bounded and printable: every report shows them, in a terminal,
// Markdown and HTML.
const (
	MaxLabels      = 32
	MaxLabelKey    = 64
	MaxLabelValue  = 256
	labelKeyFirsts = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	labelKeyChars  = labelKeyFirsts + "0123456789_.-"
)

// ParseLabel reads one "key=value" label as given to --label.
func ParseLabel(s string) (key, value string, err error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("label %q: want key=value, such as fw=22.31.1014", s)
	}
	if err := checkLabel(key, value); err != nil {
		return "", "", err
	}
	return key, value, nil
}

// checkLabel checks one label's key and value.
func checkLabel(key, value string) error {
	switch {
	case key == "":
		return fmt.Errorf("label %q: empty key", key+"="+value)
	case len(key) > MaxLabelKey:
		return fmt.Errorf("label key %.20q...: longer than %d bytes", key, MaxLabelKey)
	case !strings.ContainsRune(labelKeyFirsts, rune(key[0])) || strings.Trim(key, labelKeyChars) != "":
		return fmt.Errorf("label key %q: want a letter, then letters, digits, '_', '.' or '-'", key)
	case len(value) > MaxLabelValue:
		return fmt.Errorf("label %s: value longer than %d bytes", key, MaxLabelValue)
	case !utf8.ValidString(value):
		return fmt.Errorf("label %s: value is not UTF-8", key)
	case strings.IndexFunc(value, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return fmt.Errorf("label %s: value %q has a control character", key, value)
	}
	return nil
}

// ParseLabels reads repeated --label flags into a map; a key given twice
// is an error (which one was meant?).
func ParseLabels(args []string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if len(args) > MaxLabels {
		return nil, fmt.Errorf("%d labels: at most %d", len(args), MaxLabels)
	}
	m := map[string]string{}
	for _, a := range args {
		k, v, err := ParseLabel(a)
		if err != nil {
			return nil, err
		}
		if old, dup := m[k]; dup {
			return nil, fmt.Errorf("label %s given twice (%q and %q)", k, old, v)
		}
		m[k] = v
	}
	return m, nil
}

// ValidateLabels checks labels read from a file.
func ValidateLabels(m map[string]string) error {
	if len(m) > MaxLabels {
		return fmt.Errorf("%d labels: at most %d", len(m), MaxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := checkLabel(k, m[k]); err != nil {
			return err
		}
	}
	return nil
}

// LabelString writes labels as "k=v k=v", sorted by key; "" for none.
func LabelString(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}
