package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// externalRef finds anything that would make report.html load another
// resource: a src or href that is not a data: URI or an in-page anchor, a
// CSS url() or @import that is not data:, a script.
var externalRef = regexp.MustCompile(`(?i)(?:\b(?:src|href|xlink:href)\s*=\s*["']?(?:[^"'#d]|d[^a]|da[^t]|dat[^a]|data[^:]))|url\(\s*["']?(?:[^"'d)]|d[^a])|@import|<script|<iframe|<object|<embed`)

func TestExternalRefPattern(t *testing.T) {
	for s, want := range map[string]bool{
		`<link rel="icon" href="data:,">`:                false,
		`<a href="#reg-spectrum">`:                       false,
		`<img src="plots/x.png">`:                        true,
		`<link href="https://cdn.example/x.css">`:        true,
		`src: url(data:font/ttf;base64,AAAA)`:            false,
		`background: url("http://example.com/x.png")`:    true,
		`<script>alert(1)</script>`:                      true,
		`<image xlink:href="plots/a.png" width="1"/>`:    true,
		`<image xlink:href="data:image/png;base64,AAA">`: false,
	} {
		if got := externalRef.MatchString(s); got != want {
			t.Errorf("externalRef.MatchString(%q) = %v, want %v", s, got, want)
		}
	}
}

// generateFixtures writes the combined report of the three fixture runs.
func generateFixtures(t *testing.T) (string, []*Run) {
	t.Helper()
	var dirs []string
	for _, f := range allFixtures() {
		dirs = append(dirs, fixtureDir(t, f))
	}
	// and one the engine wrote
	dirs = append(dirs, filepath.Join("testdata", "runs", "engine-lifecycle"))
	out := t.TempDir()
	if _, err := Generate(dirs, out); err != nil {
		t.Fatal(err)
	}
	var runs []*Run
	for _, d := range dirs {
		r, err := LoadRun(d)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return out, runs
}

// TestHTML generates one combined report (three synthetic runs and one
// the engine wrote) and checks it twice: as text, then in a browser.
func TestHTML(t *testing.T) {
	out, runs := generateFixtures(t)
	t.Run("self-contained", func(t *testing.T) { testHTMLSelfContained(t, out, runs) })
	t.Run("chromium", func(t *testing.T) { testHTMLInChromium(t, out) })
}

func testHTMLSelfContained(t *testing.T, out string, runs []*Run) {
	html, err := os.ReadFile(filepath.Join(out, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if m := externalRef.Find(html); m != nil {
		t.Errorf("report.html refers to an external resource: %q", m)
	}
	svgs, _ := filepath.Glob(filepath.Join(out, plotsDir, "*.svg"))
	if n := bytes.Count(html, []byte("<svg ")); n != len(svgs) || n == 0 {
		t.Errorf("report.html inlines %d SVGs, plots/ has %d", n, len(svgs))
	}
	// What the page must tell: environment, configuration, command line,
	// the summary figures and every warning.
	page := string(html)
	for _, run := range runs {
		r := run.Result
		want := []string{r.Environment.Host, r.Environment.CPUModel, r.Config.Workload, htmlEscape(strings.Join(quoteArgs(r.Config.CommandLine), " "))}
		for _, row := range summaryRows(run) {
			want = append(want, units.FormatNS(float64(row.Stats.NS.P99)), units.FormatRate(row.Stats.OpsPerSec))
		}
		for _, w := range warningLines(run) {
			want = append(want, htmlEscape(w))
		}
		if d := r.Environment.Device; d != nil && d.FWVer != "" {
			want = append(want, d.FWVer)
		}
		for _, s := range want {
			if !strings.Contains(page, s) {
				t.Errorf("%s: report.html lacks %q", run.Label, s)
			}
		}
	}
	checkHeadline(t, page, runs, true)
	// The figures of the fixtures' own cases.
	for _, s := range []string{
		"expected EINVAL: 4200", "expected EINVAL: 4197", // errors: intended failures apart from errors
		"median over the 1 repetition ±", "<td class=\"n\">n/a</td>", // tiny: one repetition
		"<th>measured</th><td>4s in all, stopped early</td>", // errors: interrupted
	} {
		if !strings.Contains(page, htmlEscapeKeepQuotes(s)) {
			t.Errorf("report.html lacks %q", s)
		}
	}
	for _, s := range []string{"1 repetitions", "0ns (0.0%)", "1 QPs", "1 operations"} {
		if strings.Contains(page, s) {
			t.Errorf("report.html says %q", s)
		}
	}
}

func htmlEscapeKeepQuotes(s string) string {
	return strings.NewReplacer("&", "&amp;").Replace(s)
}

// headlineSection is the page's headline section, "" if it has none.
func headlineSection(page string) string {
	i := strings.Index(page, `<section id="headline">`)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</section>")
	if j < 0 {
		return ""
	}
	return page[i : i+j]
}

// checkHeadline: the headline opens the page (before any summary table),
// says each run's sentences, and holds each run's op-kind overlays; the
// test-double banner shows once where a run went through the double.
func checkHeadline(t *testing.T, page string, runs []*Run, labelled bool) {
	t.Helper()
	hs := headlineSection(page)
	if hs == "" {
		t.Fatal(`report.html has no <section id="headline">`)
	}
	if strings.Index(page, hs) > strings.Index(page, "<h3>Summary</h3>") {
		t.Error("the headline comes after the summary table")
	}
	double := false
	for _, run := range runs {
		h := newHeadline(run)
		for _, s := range h.Kinds {
			if !strings.Contains(hs, htmlEscape(s)) {
				t.Errorf("%s: headline lacks %q", run.Label, s)
			}
		}
		if h.Destruction != nil && !strings.Contains(hs, htmlEscape(h.Destruction.sentence())) {
			t.Errorf("%s: headline lacks %q", run.Label, h.Destruction.sentence())
		}
		prefix := ""
		if labelled {
			prefix = results.SafeFileName(run.Label) + "-"
		}
		for _, name := range []string{"overlay-spectrum", "overlay-histogram"} {
			if !strings.Contains(hs, `<figure id="`+prefix+name+`"><svg `) {
				t.Errorf("%s: no %s figure in the headline", run.Label, prefix+name)
			}
		}
		double = double || IsTestDouble(run.Result)
	}
	if n := strings.Count(page, `id="test-double"`); double && n != 1 || !double && n != 0 {
		t.Errorf("%d test-double banners, want one exactly where a run went through the double (%v)", n, double)
	}
	if double && strings.Index(page, `id="test-double"`) > strings.Index(page, hs) {
		t.Error("the test-double banner comes after the headline")
	}
}

// TestHTMLSingleRun: one run's page names the run once, in its title, and
// opens with its headline and overlays.
func TestHTMLSingleRun(t *testing.T) {
	// errors: a run of the test double, stopped early (TestHTML covers
	// lifecycle's headline on a page of several).
	for _, f := range []fixture{errorsFixture()} {
		t.Run(f.name, func(t *testing.T) {
			dir := copyRun(t, fixtureDir(t, f))
			if _, err := Generate([]string{dir}, ""); err != nil {
				t.Fatal(err)
			}
			run, err := LoadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, HTMLFile))
			if err != nil {
				t.Fatal(err)
			}
			page := string(data)
			title := htmlEscape(title(run.Result))
			// The pictures carry it in their stamp (they leave the page);
			// the page's own text says it twice.
			text := regexp.MustCompile(`(?s)<svg.*?</svg>`).ReplaceAllString(page, "")
			if n := strings.Count(text, title); n != 2 { // <title> and <h1>
				t.Errorf("the run's title %q appears %d times outside the pictures, want twice (<title>, <h1>)", title, n)
			}
			if n, want := strings.Count(page, "<svg"), strings.Count(page, RunStamp(run.Result).Line); n == 0 || want < n {
				t.Errorf("%d pictures, %d of them stamped with %q", n, want, RunStamp(run.Result).Line)
			}
			checkHeadline(t, page, []*Run{run}, false)
			for _, name := range []string{"overlay-spectrum.png", "overlay-histogram.png"} {
				b, err := os.ReadFile(filepath.Join(dir, plotsDir, name))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := png.Decode(bytes.NewReader(b)); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
			if err != nil {
				t.Fatal(err)
			}
			// summary.md opens with the headline and shows the overlays.
			m := string(md)
			if i, j := strings.Index(m, "**Headline**"), strings.Index(m, "| op |"); i < 0 || i > j {
				t.Errorf("summary.md does not open with its headline:\n%s", m)
			}
			for _, s := range []string{"`plots/overlay-spectrum.png`", "`plots/overlay-histogram.png`"} {
				if !strings.Contains(m, s) {
					t.Errorf("summary.md lacks %q", s)
				}
			}
			if IsTestDouble(run.Result) != strings.Contains(m, "> **Not hardware.** "+TestDoubleBanner) {
				t.Errorf("summary.md: test-double banner present %v, want %v", !IsTestDouble(run.Result), IsTestDouble(run.Result))
			}
		})
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// chromium runs headless Chromium on url with extra arguments and returns
// its stdout and stderr.
func chromium(t *testing.T, bin, url string, args ...string) (stdout, stderr []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), url)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, e.Bytes())
	}
	return o.Bytes(), e.Bytes()
}

// consoleLine is how Chromium logs a page's console output with
// --enable-logging=stderr: any console.error, uncaught exception or
// failed resource load shows up as one.
var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE(?:\(\d+\))?:?\d*\].*$`)

// testHTMLInChromium opens report.html in headless Chromium: the page must
// render (a screenshot with ink on it), the browser's DOM must hold every
// plot, and the console must stay silent.
func testHTMLInChromium(t *testing.T, out string) {
	if testing.Short() {
		t.Skip("skipped in -short: starts headless Chromium")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Skip(t, testenv.Chromium, "chromium is not installed (apt-get install chromium): report.html not rendered")
	}
	abs, err := filepath.Abs(filepath.Join(out, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	url := "file://" + abs

	shot := filepath.Join(t.TempDir(), "shot.png")
	_, stderr := chromium(t, bin, url, "--window-size=1280,2400", "--screenshot="+shot, "--hide-scrollbars")
	if lines := consoleLine.FindAll(stderr, -1); len(lines) > 0 {
		t.Errorf("console output while rendering report.html:\n%s", bytes.Join(lines, []byte("\n")))
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// Tables, text and plots cover far more than 3% of a 1280×2400 page; a
	// blank or error page does not.
	if ink := inked(img); ink < 0.03 {
		t.Errorf("screenshot is %.2f%% inked: the page looks blank", 100*ink)
	}

	dom, stderr := chromium(t, bin, url, "--dump-dom")
	if lines := consoleLine.FindAll(stderr, -1); len(lines) > 0 {
		t.Errorf("console output while loading report.html:\n%s", bytes.Join(lines, []byte("\n")))
	}
	svgs, _ := filepath.Glob(filepath.Join(out, plotsDir, "*.svg"))
	if n := bytes.Count(dom, []byte("<svg ")); n != len(svgs) {
		t.Errorf("the browser's DOM holds %d SVG plots, want %d", n, len(svgs))
	}
	if !bytes.Contains(dom, []byte("<h1>xrcbench: 5 runs</h1>")) {
		t.Errorf("the DOM lacks the page heading")
	}
	// The browser sees the headline first, with the overlays rendered in it.
	hs := headlineSection(string(dom))
	if hs == "" || strings.Index(string(dom), hs) > strings.Index(string(dom), "<h3>Summary</h3>") {
		t.Errorf("the DOM has no headline section ahead of the summaries")
	}
	for _, name := range []string{"lifecycle-overlay-spectrum", "lifecycle-overlay-histogram"} {
		if !strings.Contains(hs, `<figure id="`+name+`"><svg `) {
			t.Errorf("the DOM's headline lacks the rendered %s plot", name)
		}
	}
	if !strings.Contains(string(dom), `id="test-double"`) {
		t.Errorf("the DOM lacks the test-double banner")
	}
}

// TestConsoleLinePattern checks the pattern against lines Chromium 13x
// really wrote.
func TestConsoleLinePattern(t *testing.T) {
	for s, want := range map[string]bool{
		`[15229:15229:1129/091909.998765:INFO:CONSOLE:1] "boom-test", source: file:///tmp/bad.html (1)`: true,
		`[1:1:0101/000000.000000:INFO:CONSOLE(12)] "Uncaught TypeError", source: file:///x (12)`:        true,
		`[15066:15095:1129/091904.034497:ERROR:dbus/bus.cc:405] Failed to connect to the bus`:           false,
	} {
		if got := consoleLine.MatchString(s); got != want {
			t.Errorf("consoleLine.MatchString(%q) = %v, want %v", s, got, want)
		}
	}
}

// The run's labels are rows of the configuration table of report.html.
func TestHTMLConfigLabels(t *testing.T) {
	r := synth{reps: 1, labels: map[string]string{"fw": "22.31", "board": "<b7>"}}.run("x").Result
	var got []string
	for _, row := range configRows(r) {
		if strings.HasPrefix(row.K, "label ") {
			got = append(got, row.K+"="+row.V)
		}
	}
	if want := []string{"label board=<b7>", "label fw=22.31"}; !slices.Equal(got, want) {
		t.Errorf("label rows %q, want %q", got, want)
	}
}

// The environment a command needs is written before it as assignments a
// shell takes back: a value with a space is quoted, not the assignment
// (a quoted 'NAME=a b' would be run as a command).
func TestQuoteEnv(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, ""},
		{[]string{"LD_LIBRARY_PATH=/x/build/fakeverbs"}, "LD_LIBRARY_PATH=/x/build/fakeverbs"},
		{[]string{"XRCBENCH_FAKEVERBS_DEVICES=a b", "XRCBENCH_FAKEVERBS_NOXRC="}, "XRCBENCH_FAKEVERBS_DEVICES='a b' XRCBENCH_FAKEVERBS_NOXRC=''"},
	} {
		if got := strings.Join(quoteEnv(tc.env), " "); got != tc.want {
			t.Errorf("quoteEnv(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// TestHTMLBOM: report.html shows the result's bill of materials, every
// fact or its reason, and says so plainly of a result that predates it.
func TestHTMLBOM(t *testing.T) {
	bom := &results.BOM{XrcbenchVersion: "abc123", XrcbenchRevision: "abc1234567890", KernelRelease: "6.1.0-18-amd64",
		Device: results.DeviceBOM{Driver: "mlx5_core", DriverVersion: "23.10-1.1.9", Library: "/usr/lib/libibverbs.so.1.14.44.0",
			LibraryVersion: "rdma-core 44.0", FWVer: "22.31.1014", BoardID: "MT_0000000222", HCAType: "MT4125",
			LinkSpeed: "16.0 GT/s PCIe", LinkWidth: "16", NUMANode: "1", TestDoubleCost: "reg=2us"},
		CPU: results.CPUBOM{Model: "Xeon", ThreadCPUs: "pinned: 8-9", OnDeviceNode: "yes (node 1: CPUs 8-15)",
			Governor: "performance", Boost: results.Unreadable("permission"), SMT: "off"}}
	for _, tt := range []struct {
		name string
		bom  *results.BOM
		want []string
	}{
		{"predates it", nil, []string{"<h3>Bill of materials</h3><p>Not recorded: the result predates it.</p>"}},
		{"recorded", bom, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyRun(t, filepath.Join("testdata", "runs", "engine-lifecycle"))
			r, err := results.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if r.Environment.BOM != nil {
				t.Fatal("the frozen fixture has a bill of materials: it is meant to predate it")
			}
			if tt.bom != nil {
				r.Environment.BOM = tt.bom
				if err := results.Write(dir, r); err != nil {
					t.Fatal(err)
				}
				for _, row := range tt.bom.BOMRows() {
					tt.want = append(tt.want, "<tr><th>"+htmlEscape(row[0])+"</th><td>"+htmlEscape(row[1])+"</td></tr>")
				}
			}
			if _, err := Generate([]string{dir}, ""); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, HTMLFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(data), w) {
					t.Errorf("report.html lacks %s", w)
				}
			}
		})
	}
}
