// Package yamlstrict reads the YAML files xrcbench takes as input
// (workload specs, qualification plans) the one strict way both need:
// exactly one document, every key known to the Go type it fills, and
// any problem as one line with the line number it is on, for the
// caller's own error type (workloads.SyntaxError, qualify.PlanError).
package yamlstrict

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/xrcbench/xrcbench/internal/suggest"
)

// Error is a problem in the text: the line it is on (0 when unknown) and
// what is wrong, on one line, without yaml.v3's "yaml: " and
// "unmarshal errors:" wrapping or the Go package of the decoded type.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return "line " + strconv.Itoa(e.Line) + ": " + e.Msg
	}
	return e.Msg
}

// Decode reads data, which must hold exactly one YAML document, into v (a
// pointer to a struct), refusing any key v has no field for. It returns
// the document's top node, whose Line fields locate the keys for the
// caller's own checks; nil and no error when data holds no document, so
// the caller says what was expected ("empty spec", "empty plan").
func Decode(data []byte, v any) (*yaml.Node, *Error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, wrap(err, v)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return nil, wrap(err, v)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, &Error{Line: extra.Line, Msg: "more than one YAML document"}
	}
	return root.Content[0], nil
}

// Find is the value of key in the mapping n, or nil when n is not a
// mapping or has no such key.
func Find(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// lineRE is yaml.v3's "line N: why"; a type's own UnmarshalYAML error
// may carry a second one, which counts instead.
var lineRE = regexp.MustCompile(`^line (\d+): `)

// wrap turns a yaml.v3 error, whose text carries the line, into an Error.
// Of a type error's list only the first counts: one line per problem.
func wrap(err error, v any) *Error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimSpace(msg)
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	line := 0
	for range 2 {
		m := lineRE.FindStringSubmatch(msg)
		if m == nil {
			break
		}
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	// "field x not found in type workloads.Spec": the reader wrote YAML,
	// not Go, so the package goes.
	if t := reflect.TypeOf(v); t != nil && t.Kind() == reflect.Pointer {
		if pkg, _, ok := strings.Cut(t.Elem().String(), "."); ok {
			msg = strings.ReplaceAll(msg, "in type "+pkg+".", "in ")
			msg = strings.ReplaceAll(msg, "into "+pkg+".", "into ")
		}
	}
	msg = redact(msg)
	if m := unknownRE.FindStringSubmatch(msg); m != nil {
		msg = unknownKey(m[1], m[2], reflect.TypeOf(v))
	}
	return &Error{Line: line, Msg: strings.Join(strings.Fields(msg), " ")}
}

// unknownKey says which key is unknown and what was probably meant, in
// YAML's words: yaml.v3 names the Go type ("field repetitons not found
// in Plan"), which a reader of the file never wrote. The keys come from
// the yaml tags of the type named, found among those v is made of.
func unknownKey(key, typeName string, v reflect.Type) string {
	var keys []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if t.Name() == typeName && name != "" && name != "-" {
				keys = append(keys, name)
			}
			walk(f.Type)
		}
	}
	if v != nil {
		walk(v)
	}
	if s := suggest.Phrase(suggest.For(key, keys), func(k string) string { return k }); s != "" {
		return "unknown key " + key + "; " + s
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		return "unknown key " + key + " (known here: " + strings.Join(keys, ", ") + ")"
	}
	return "unknown key " + key
}

// The file may not be YAML of ours at all (--workload /etc/shadow): a
// message names the line and the key, never what the file holds there.
// yaml.v3 quotes a scalar's first characters in a type error, an unknown
// or repeated key and an anchor's name whole; those go. A key is named
// only when it reads as one (a word of letters, digits, '_', '-' or '.',
// as every key xrcbench knows is): "root:*:20228:0:" does not.
var (
	scalarRE  = regexp.MustCompile("(?s)^(cannot unmarshal \\S+) `.*`( into .*)$")
	unknownRE = regexp.MustCompile(`(?s)^field (.*) not found in (.*)$`)
	repeatRE  = regexp.MustCompile(`(?s)^mapping key (".*") already defined at line (\d+)$`)
	anchorRE  = regexp.MustCompile(`(?s)^(unknown anchor|anchor) '.*' (referenced|value contains itself)$`)
	keyRE     = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,40}$`)
)

func redact(msg string) string {
	if m := scalarRE.FindStringSubmatch(msg); m != nil {
		return m[1] + m[2]
	}
	if m := unknownRE.FindStringSubmatch(msg); m != nil {
		if keyRE.MatchString(m[1]) {
			return msg
		}
		return "unknown key (not shown: it is not a plain word)"
	}
	if m := repeatRE.FindStringSubmatch(msg); m != nil {
		if k, err := strconv.Unquote(m[1]); err == nil && keyRE.MatchString(k) {
			return "key " + k + " already given at line " + m[2]
		}
		return "a key given again, already at line " + m[2]
	}
	if m := anchorRE.FindStringSubmatch(msg); m != nil {
		return m[1] + " " + m[2]
	}
	if strings.HasPrefix(msg, "invalid map key") {
		return "invalid map key"
	}
	return msg
}
