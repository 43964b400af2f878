package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/xrcbench/xrcbench/results"
)

// hostile strings a result.json can carry: raw HTML, a link, an image,
// emphasis, a heading, a list, a table cell break, an autolink, a code
// span that tries to close early, line breaks.
var hostile = []string{
	`<script>alert(1)</script>`,
	`[click](javascript:alert(1))`,
	`![img](http://example.com/x.png)`,
	`**bold** _em_ ~~del~~`,
	"# heading\n- item\n1. item",
	`a | b | c`,
	`http://example.com www.example.com me@example.com`,
	"`code` ``more`` <img src=x onerror=alert(1)>",
	`&lt;entity&gt; &amp;`,
}

func mdHTMLEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// A run whose strings are all hostile renders as plain text in summary.md
// (checked by rendering it with a CommonMark+GFM renderer) and in
// report.html (escaped by html/template).
func TestReportEscapesHostileStrings(t *testing.T) {
	r, err := results.Load(fixtureDir(t, lifecycleFixture()))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(hostile, " ")
	r.Config.Workload = hostile[4]
	r.Config.Provider = hostile[5]
	r.Environment.Host = hostile[7]
	r.Environment.CPUModel = hostile[0]
	r.Environment.Kernel = hostile[1]
	r.Environment.Version = hostile[3]
	r.Environment.Device = &results.Device{Name: hostile[2], FWVer: hostile[6], NUMANode: -1}
	for _, h := range hostile {
		r.Warnings = append(r.Warnings, results.LegacyWarning(h))
	}
	r.Ops[all] = r.Ops["reg"]
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate([]string{dir}, ""); err != nil {
		t.Fatal(err)
	}

	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM))
	if err := gm.Convert(md, &html); err != nil {
		t.Fatal(err)
	}
	out := html.String()
	for _, bad := range []string{"<script", "<img", "<a ", "<em>", "<del>", "<strong>bold", "<h1", "<h3", "<ol", "&lt;entity"} {
		if strings.Contains(out, bad) {
			t.Errorf("summary.md renders %q from a string of the result:\n%s", bad, out)
		}
	}
	if n := strings.Count(out, "<h2"); n != 1 {
		t.Errorf("%d headings, want 1:\n%s", n, out)
	}
	run, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The headline's sentences (one per op kind, one on destruction) and
	// the warnings are the only list items.
	items := len(warningLines(run)) + len(newHeadline(run).Kinds)
	if newHeadline(run).Destruction != nil {
		items++
	}
	if n, want := strings.Count(out, "<li>"), items; n != want {
		t.Errorf("%d list items for %d warnings: a string made a list:\n%s", n, want, out)
	}
	if !strings.Contains(out, "<td>"+mdHTMLEscape(strings.Join(strings.Fields(all), " "))+"</td>") {
		t.Errorf("the hostile op kind is not one cell of plain text:\n%s", out)
	}
	for _, row := range regexp.MustCompile(`(?s)<tr>.*?</tr>`).FindAllString(out, -1) {
		if cells := strings.Count(row, "<td") + strings.Count(row, "<th"); cells != 12 {
			t.Errorf("a table row of %d cells, want 12: %s", cells, row)
		}
	}

	page, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script>alert", "<img src=x", `href="javascript`, "<strong>bold"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("report.html carries %q unescaped", bad)
		}
	}
	if !bytes.Contains(page, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) {
		t.Errorf("report.html does not show the hostile host name as text")
	}
}

// A run whose device, host and other strings carry control characters (an
// escape sequence in a device name, a window-title sequence, an 8-bit CSI,
// a right-to-left override) writes none of them into any file a person
// reads: summary.md, bench.txt, report.html and the SVG plots show them as
// \x1b-style escapes.
func TestReportEscapesControlCharacters(t *testing.T) {
	r, err := results.Load(fixtureDir(t, lifecycleFixture()))
	if err != nil {
		t.Fatal(err)
	}
	r.Config.Workload = "steady\x1b[2J"
	r.Config.Device = "mlx5_\x1b[31m0"
	r.Environment.Host = "node\x1b]0;pwned\a1"
	r.Environment.CPUModel = "EPYC\u009b31m"
	r.Environment.Kernel = "Linux\u202eevil"
	r.Environment.Device = &results.Device{Name: "mlx5_\x1b[31m0", Driver: "mlx5\rX", NUMANode: -1}
	r.Warnings = append(r.Warnings, results.NewWarning(results.WarnLeak, results.SeverityWarning, 0, "", "device mlx5_\x1b[31m0 warned"))
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	rep, err := Generate([]string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	control := regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e]")
	checked := 0
	for _, path := range rep.Files {
		if strings.HasSuffix(path, ".png") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if loc := control.FindIndex(data); loc != nil {
			t.Errorf("%s carries a control character: %q", filepath.Base(path), data[max(0, loc[0]-20):min(len(data), loc[1]+20)])
		}
		checked++
	}
	if checked < 4 {
		t.Errorf("%d files checked, want summary.md, bench.txt, report.html and plots: %v", checked, rep.Files)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md, []byte(`mlx5\_\x1b\[31m0`)) {
		t.Errorf("summary.md does not show the device name's ESC as \\x1b:\n%s", md)
	}
}
