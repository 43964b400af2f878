package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// junitSchema is the common JUnit schema CI servers read (Jenkins'
// junit-10.xsd, the Ant format): per element, its children in the order
// allowed, and its attributes, required ones first (req of them).
var junitSchema = map[string]struct {
	children []string
	attrs    []string
	req      int
	text     bool
}{
	"testsuites": {children: []string{"testsuite"}, attrs: []string{"name", "tests", "failures", "errors", "skipped", "time", "disabled"}},
	"testsuite": {children: []string{"properties", "testcase", "system-out", "system-err"},
		attrs: []string{"name", "tests", "failures", "errors", "skipped", "time", "timestamp", "hostname", "id", "package", "disabled"}, req: 2},
	"properties": {children: []string{"property"}},
	"property":   {attrs: []string{"name", "value"}, req: 2},
	"testcase": {children: []string{"skipped", "error", "failure", "system-out", "system-err"},
		attrs: []string{"name", "classname", "time", "assertions", "status"}, req: 1},
	"skipped":    {attrs: []string{"message"}, text: true},
	"error":      {attrs: []string{"message", "type"}, text: true},
	"failure":    {attrs: []string{"message", "type"}, text: true},
	"system-out": {text: true},
	"system-err": {text: true},
}

// reporter is what parseJUnit reports to: a *testing.T, or a recorder
// when the checker itself is under test.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// recorder counts what parseJUnit found; Fatalf ends the checking goroutine.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// node is a parsed element.
type node struct {
	name     string
	attrs    map[string]string
	children []*node
	text     string
}

// parseJUnit parses data and checks it against junitSchema: elements,
// their order, attributes (required and allowed), numbers where numbers
// belong, and that the counts agree with the testcases.
func parseJUnit(t reporter, data []byte) *node {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var stack []*node
	var root *node
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, data)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) == 0 {
				if root != nil {
					t.Fatalf("two root elements")
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tok)
			}
		}
	}
	if root == nil || root.name != "testsuites" {
		t.Fatalf("root is not testsuites")
	}
	var check func(n *node)
	check = func(n *node) {
		s, ok := junitSchema[n.name]
		if !ok {
			t.Errorf("element %s is not in the JUnit schema", n.name)
			return
		}
		for i, a := range s.attrs[:s.req] {
			if _, ok := n.attrs[a]; !ok {
				t.Errorf("%s lacks required attribute %s (#%d)", n.name, a, i)
			}
		}
		for a, v := range n.attrs {
			if !slices.Contains(s.attrs, a) {
				t.Errorf("%s has attribute %s, not in the schema", n.name, a)
			}
			switch a {
			case "tests", "failures", "errors", "skipped":
				if k, err := strconv.Atoi(v); err != nil || k < 0 {
					t.Errorf("%s %s=%q: not a count", n.name, a, v)
				}
			case "time":
				if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 {
					t.Errorf("%s time=%q: not seconds", n.name, a)
				}
			case "timestamp":
				if _, err := time.Parse("2006-01-02T15:04:05", v); err != nil {
					t.Errorf("%s timestamp=%q: %v", n.name, v, err)
				}
			}
		}
		if !s.text && strings.TrimSpace(n.text) != "" {
			t.Errorf("%s has text %q", n.name, n.text)
		}
		last := -1
		for _, c := range n.children {
			i := slices.Index(s.children, c.name)
			if i < 0 {
				t.Errorf("%s inside %s: not allowed there", c.name, n.name)
				continue
			}
			if i < last || (i == last && n.name == "testcase" && c.name == "skipped") {
				t.Errorf("%s inside %s: out of order", c.name, n.name)
			}
			last = i
			check(c)
		}
	}
	check(root)
	// The counts agree with the cases, per suite and in all.
	sum := map[string]int{}
	for _, s := range root.children {
		if s.name != "testsuite" {
			continue
		}
		got := map[string]int{}
		for _, c := range s.children {
			if c.name != "testcase" {
				continue
			}
			got["tests"]++
			for _, o := range c.children {
				switch o.name {
				case "failure":
					got["failures"]++
				case "error":
					got["errors"]++
				case "skipped":
					got["skipped"]++
				}
			}
		}
		for _, k := range []string{"tests", "failures", "errors", "skipped"} {
			if s.attrs[k] != fmt.Sprint(got[k]) {
				t.Errorf("suite %s: %s=%s, cases say %d", s.attrs["name"], k, s.attrs[k], got[k])
			}
			sum[k] += got[k]
		}
	}
	for _, k := range []string{"tests", "failures", "errors", "skipped"} {
		if root.attrs[k] != fmt.Sprint(sum[k]) {
			t.Errorf("testsuites %s=%s, cases say %d", k, root.attrs[k], sum[k])
		}
	}
	return root
}

// find returns the testcase named name in suite.
func (n *node) find(suite, name string) *node {
	for _, s := range n.children {
		if s.attrs["name"] != suite {
			continue
		}
		for _, c := range s.children {
			if c.name == "testcase" && c.attrs["name"] == name {
				return c
			}
		}
	}
	return nil
}

func (n *node) child(name string) *node {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

func TestWriteJUnit(t *testing.T) {
	start := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	rep := JUnitReport{Name: "xrcbench qualify", Suites: []JUnitSuite{
		{Name: "conformance", Timestamp: start, Hostname: "h1",
			Properties: []JUnitProperty{{"device", "mlx5_0"}, {"fw_ver", `22.31.1014 "<beta>"`}},
			Cases: []JUnitCase{
				{Name: "S1", Time: 1500 * time.Millisecond},
				{Name: "S2", Skipped: &JUnitOutcome{Message: "needs two processes"}},
			}},
		{Name: "criteria", Cases: []JUnitCase{
			{Name: "unreg_last.p99 <= 2ms", Classname: "lifecycle", Time: -time.Second,
				Failure:   &JUnitOutcome{Message: "unreg_last p99 3.1ms > 2ms", Type: "limit", Text: "evidence: runs/lifecycle\x1b[31m"},
				SystemOut: "p99 3.1ms over 5 repetitions & more"},
			{Name: "reg.p50 regression <= 5%", Error: &JUnitOutcome{Message: "no baseline"}},
			{Name: "ok"},
		}},
		{Name: "empty"},
	}}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !rep.failed() {
		t.Errorf("a report with a failure is not Failed")
	}
	root := parseJUnit(t, buf.Bytes())
	if root.attrs["tests"] != "5" || root.attrs["failures"] != "1" || root.attrs["errors"] != "1" || root.attrs["skipped"] != "1" || root.attrs["time"] != "1.500" {
		t.Errorf("testsuites attrs %v", root.attrs)
	}
	conf := root.children[0]
	if conf.attrs["timestamp"] != "2026-12-01T04:00:00" || conf.attrs["hostname"] != "h1" {
		t.Errorf("suite attrs %v", conf.attrs)
	}
	if p := conf.child("properties").children[1]; p.attrs["name"] != "fw_ver" || p.attrs["value"] != `22.31.1014 "<beta>"` {
		t.Errorf("property %v", p.attrs)
	}
	f := root.find("criteria", "unreg_last.p99 <= 2ms")
	if f == nil || f.attrs["classname"] != "lifecycle" || f.attrs["time"] != "0.000" {
		t.Fatalf("failing case: %+v", f)
	}
	fail := f.child("failure")
	if fail == nil || fail.attrs["message"] != "unreg_last p99 3.1ms > 2ms" || fail.attrs["type"] != "limit" ||
		fail.text != "evidence: runs/lifecycle\uFFFD[31m" {
		t.Errorf("failure %+v: the message, type and text (control character replaced) must survive", fail)
	}
	if so := f.child("system-out"); so == nil || so.text != "p99 3.1ms over 5 repetitions & more" {
		t.Errorf("system-out %+v", so)
	}
	if c := root.find("criteria", "ok"); c == nil || len(c.children) != 0 || c.attrs["classname"] != "criteria" {
		t.Errorf("passing case %+v: no children, classname the suite's", c)
	}

	// Two outcomes in one case is the caller's mistake, not an XML file.
	bad := JUnitReport{Suites: []JUnitSuite{{Name: "s", Cases: []JUnitCase{{Name: "c", Failure: &JUnitOutcome{}, Skipped: &JUnitOutcome{}}}}}}
	if err := WriteJUnit(io.Discard, bad); err == nil || !strings.Contains(err.Error(), "2 outcomes") {
		t.Errorf("two outcomes: err %v", err)
	}
	if (JUnitReport{Suites: []JUnitSuite{{Name: "s", Cases: []JUnitCase{{Name: "c", Skipped: &JUnitOutcome{}}}}}}).failed() {
		t.Errorf("a skipped case is not a failure")
	}
}

// A suite whose checks ran together carries their wall time: the larger
// of its Time and its cases' sum, and the report's total adds it.
func TestWriteJUnitSuiteTime(t *testing.T) {
	rep := JUnitReport{Suites: []JUnitSuite{
		{Name: "together", Time: 2500 * time.Millisecond, Cases: []JUnitCase{{Name: "a"}, {Name: "b"}}},
		{Name: "timed", Time: time.Second, Cases: []JUnitCase{{Name: "c", Time: 3 * time.Second}}},
	}}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, rep); err != nil {
		t.Fatal(err)
	}
	root := parseJUnit(t, buf.Bytes())
	if root.attrs["time"] != "5.500" || root.children[0].attrs["time"] != "2.500" || root.children[1].attrs["time"] != "3.000" {
		t.Errorf("times: report %s, suites %s and %s; want 5.500, 2.500, 3.000", root.attrs["time"], root.children[0].attrs["time"], root.children[1].attrs["time"])
	}
}

// The checker itself must catch what the schema forbids, or the test above
// proves nothing.
func TestJUnitCheckerCatches(t *testing.T) {
	for _, doc := range []string{
		`<testsuites tests="1" failures="0" errors="0" skipped="0"><testsuite name="s" tests="2" failures="0" errors="0" skipped="0"><testcase name="a"/></testsuite></testsuites>`,
		`<testsuites tests="1" failures="0" errors="0" skipped="0"><testsuite name="s" tests="1" failures="0" errors="0" skipped="0"><testcase name="a"><system-out/><failure/></testcase></testsuite></testsuites>`,
		`<testsuites tests="1" failures="0" errors="0" skipped="0"><testsuite name="s" tests="1" failures="0" errors="0" skipped="0"><testcase/></testsuite></testsuites>`,
		`<testsuites tests="1" failures="0" errors="0" skipped="0"><testsuite name="s" tests="1" failures="0" errors="0" skipped="0"><testcase name="a" time="x"/></testsuite></testsuites>`,
		`<testsuites tests="1" failures="0" errors="0" skipped="0"><testsuite name="s" tests="1" failures="0" errors="0" skipped="0"><testcase name="a"><verdict/></testcase></testsuite></testsuites>`,
		`<testsuites tests="1" failures="0" errors="0" skipped="0"><testsuite name="s" tests="1" failures="0" errors="0" skipped="0"><testcase name="a"><failure></testcase></testsuite></testsuites>`,
	} {
		rec := &recorder{}
		done := make(chan struct{})
		go func() { // parseJUnit may Fatal: it ends this goroutine only
			defer close(done)
			parseJUnit(rec, []byte(doc))
		}()
		<-done
		if len(rec.errs) == 0 {
			t.Errorf("checker accepted %s", doc)
		}
	}
}
