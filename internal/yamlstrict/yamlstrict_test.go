package yamlstrict

import (
	"fmt"
	"testing"

	"gopkg.in/yaml.v3"
)

type inner struct {
	Size size `yaml:"size"`
}

type doc struct {
	Name  string `yaml:"name"`
	Count int    `yaml:"count"`
	Inner inner  `yaml:"inner"`
}

// size fails the way qualify's own types do: its error names the line.
type size int

func (s *size) UnmarshalYAML(n *yaml.Node) error {
	if n.Value != "big" {
		return fmt.Errorf("line %d: size %q: want big", n.Line, n.Value)
	}
	*s = 1
	return nil
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"syntax", "name: x\ncount: 1: 2\n", 2, "mapping values are not allowed in this context"},
		// yaml.v3 gives no line for a problem on the first line: the message
		// still loses its "yaml: " prefix, as it does with a line.
		{"syntax without a line", "name: \"\\q\"\n", 0, "found unknown escape character"},
		// In YAML's words, not Go's ("field repetitons not found in Plan"),
		// with what was probably meant, or else what the keys there are.
		{"unknown key", "name: x\ncolour: red\n", 2, "unknown key colour (known here: count, inner, name)"},
		{"unknown nested key, a typo", "name: x\ninner:\n  sise: big\n", 3, "unknown key sise; did you mean size?"},
		{"a typo at the top", "name: x\ncuont: 3\n", 2, "unknown key cuont; did you mean count?"},
		{"wrong type, first of several", "name: x\ncount: many\ninner: [1]\n", 2, "cannot unmarshal !!str into int"},
		{"a type's own error keeps its line", "name: x\ninner:\n  size: small\n", 3, `size "small": want big`},
		// What is not a key of ours is not echoed: the file may be any
		// file (--workload /etc/shadow), and its lines secrets.
		{"a line that is no key", "root:$6$s3cretHash:20228:0:99999:7:::\n", 1, "unknown key (not shown: it is not a plain word)"},
		{"a key with spaces", "name: x\nmy s3cret pass: 1\n", 2, "unknown key (not shown: it is not a plain word)"},
		{"a scalar where the document should be", "s3cretHashValue\n", 1, "cannot unmarshal !!str into doc"},
		{"a scalar of a short secret", "name: x\ncount: s3cr\n", 2, "cannot unmarshal !!str into int"},
		{"an anchor's name", "count: 1\nname: *s3cret\n", 0, "unknown anchor referenced"},
		{"two documents: the second one's ---", "name: x\n---\nname: y\n", 2, "more than one YAML document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d doc
			n, err := Decode([]byte(tt.src), &d)
			if err == nil {
				t.Fatalf("no error; top node %v", n)
			}
			if n != nil || err.Line != tt.line || err.Msg != tt.msg {
				t.Errorf("got node %v, line %d %q; want no node, line %d %q", n, err.Line, err.Msg, tt.line, tt.msg)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	var d doc
	n, err := Decode([]byte("# a comment\nname: x\ncount: 3\ninner:\n  size: big\n"), &d)
	if err != nil {
		t.Fatal(err)
	}
	if d != (doc{Name: "x", Count: 3, Inner: inner{Size: 1}}) {
		t.Errorf("decoded %+v", d)
	}
	if c := Find(n, "count"); c == nil || c.Line != 3 || c.Value != "3" {
		t.Errorf("count node %+v, want line 3 value 3", c)
	}
	if s := Find(Find(n, "inner"), "size"); s == nil || s.Line != 5 {
		t.Errorf("inner.size node %+v, want line 5", s)
	}
	if Find(n, "nosuch") != nil || Find(Find(n, "name"), "x") != nil || Find(nil, "name") != nil {
		t.Error("Find found a key that is not there, or looked into a scalar")
	}
	for _, empty := range []string{"", "# only a comment\n", "\n\n"} {
		var d doc
		if n, err := Decode([]byte(empty), &d); n != nil || err != nil {
			t.Errorf("%q: node %v error %v, want neither", empty, n, err)
		}
	}
}

func TestErrorString(t *testing.T) {
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{Line: 4, Msg: "bad"}, "line 4: bad"},
		{Error{Msg: "bad"}, "bad"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.e, got, tt.want)
		}
	}
}
