package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/xrcbench/xrcbench/internal/qualify"
	"github.com/xrcbench/xrcbench/internal/testenv"
)

// checkQualificationPDF holds a qualification folder's PDF and page to
// the "done when": qualification.pdf renders (pdftoppm) to one
// page or more, the first with ink on it, and the first page's text
// (pdftotext) is the page's first screen: the verdict line, the criteria
// table with its header and every criterion, the device facts, and not
// yet the evidence; a 1400×1000 screenshot of the page is drawn.
func checkQualificationPDF(t *testing.T, dir string, q *qualify.Qualification) {
	chromiumBin, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Skip(t, testenv.Chromium, "chromium is not installed (apt-get install chromium): no qualification.pdf to render")
	}
	for _, tool := range []string{"pdftoppm", "pdftotext"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Skip(t, testenv.Tool, "%s is not installed (apt-get install poppler-utils): qualification.pdf not rendered", tool)
		}
	}
	pdf := filepath.Join(dir, qualify.PDFFile)
	if q.PDF != qualify.PDFFile || q.PDFError != "" {
		t.Fatalf("qualification.json: pdf %q, pdf_error %q: want %s with Chromium installed", q.PDF, q.PDFError, qualify.PDFFile)
	}
	tmp := t.TempDir()
	run := func(name string, args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).Output()
		if err != nil {
			t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
		}
		return out
	}
	// Every page rendered, at a low resolution: one PNG a page.
	run("pdftoppm", "-r", "40", "-png", pdf, filepath.Join(tmp, "page"))
	pages, _ := filepath.Glob(filepath.Join(tmp, "page-*.png"))
	if len(pages) < 1 {
		t.Fatalf("qualification.pdf rendered to %d pages", len(pages))
	}
	// Text, tables and the coloured verdict cover far more than 2% of the
	// first page; a blank or an error page does not.
	if ink := pngInk(t, pages[0]); ink < 0.02 {
		t.Errorf("qualification.pdf's first page is %.2f%% inked: it looks blank", 100*ink)
	}
	first := strings.Join(strings.Fields(string(run("pdftotext", "-f", "1", "-l", "1", pdf, "-"))), " ")
	want := []string{strings.Join(strings.Fields(q.Headline), " "), "Criteria", "criterion", "limit", "verdict", "Device", "device name", "board_id (PSID)", "firmware", "driver", "label fw"}
	for _, c := range q.Criteria {
		want = append(want, c.Name)
	}
	for _, w := range want {
		if !strings.Contains(first, w) {
			t.Errorf("qualification.pdf's first page lacks %q:\n%s", w, first)
		}
	}
	if strings.Contains(first, "Evidence") {
		t.Errorf("qualification.pdf's first page runs on into the evidence, which starts a page of its own")
	}

	abs, err := filepath.Abs(filepath.Join(dir, qualify.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(tmp, "shot.png")
	run(chromiumBin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir="+filepath.Join(tmp, "profile"),
		"--hide-scrollbars", "--window-size=1400,1000", "--screenshot="+shot, "file://"+abs)
	if ink := pngInk(t, shot); ink < 0.03 {
		t.Errorf("the 1400×1000 screenshot of qualification.html is %.2f%% inked: it looks blank", 100*ink)
	}
}

// pngInk is the share of a PNG's pixels that are not white.
func pngInk(t *testing.T, path string) float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, n := img.Bounds(), 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}

// TestQualifyNoChromium: where no Chromium is on PATH the qualification
// is not failed for it: the verdict and exit status are the same, no PDF
// is left, qualification.json says why, and stderr says it once, in one
// line (nothing with --quiet); the verdict line is the first line of
// stdout, short, and with --quiet a failed verdict's one line on stderr.
func TestQualifyNoChromium(t *testing.T) {
	judgesNoTime(t)
	bin := engineBinary(t)
	tests := []struct {
		name, plan string
		quiet      bool
		code       int
		headline   string
	}{
		{"passes", tinyPlan, false, 0, "PASS: 16 of 17 checks passed, 1 skipped (fw=1.0)"},
		{"fails, quiet", strings.Replace(tinyPlan, "unreg_last.p99 <= 1s", "unreg_last.p99 <= 1ns", 1), true, 1, "FAIL: 1 of 17 checks failed, 1 skipped (fw=1.0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "q")
			args := []string{"qualify", "--plan", writePlan(t, tt.plan), "--out", out, "--sim-cost", "destroy=100us", "--label", "fw=1.0"}
			if tt.quiet {
				args = append(args, "--quiet")
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
			code, stdout, stderr := runProcess(cmd)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tt.code, stdout, stderr)
			}
			q, err := qualify.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if q.PDF != "" || !strings.Contains(q.PDFError, "no Chromium on PATH") {
				t.Errorf("qualification.json: pdf %q, pdf_error %q: want none and why", q.PDF, q.PDFError)
			}
			if _, err := os.Stat(filepath.Join(out, qualify.PDFFile)); err == nil {
				t.Errorf("a %s without Chromium", qualify.PDFFile)
			}
			if n := utf8.RuneCountInString(q.Headline); q.Headline != tt.headline || n > qualify.MaxHeadline {
				t.Errorf("qualification.json's headline %q (%d characters), want %q", q.Headline, n, tt.headline)
			}
			if tt.quiet {
				if stdout != "" || stderr != "xrcbench: "+tt.headline+"\n" {
					t.Errorf("--quiet: stdout %q, stderr %q: want nothing, and the verdict line alone", stdout, stderr)
				}
				return
			}
			notice := "qualify: no " + qualify.PDFFile + ": " + q.PDFError + "\n"
			if strings.Count(stderr, "no "+qualify.PDFFile) != 1 || !strings.Contains(stderr, notice) {
				t.Errorf("stderr says the missing PDF %d times, want once as %q:\n%s", strings.Count(stderr, "no "+qualify.PDFFile), notice, stderr)
			}
			if line, _, _ := strings.Cut(stdout, "\n"); line != tt.headline || strings.Contains(stdout, qualify.PDFFile) {
				t.Errorf("stdout's first line %q: want the verdict line %q, and no PDF named\n%s", line, tt.headline, stdout)
			}
		})
	}
}
