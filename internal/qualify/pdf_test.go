package qualify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// fakeChromium puts a script named chromium first and alone on PATH: the
// browser as printPDF sees it, doing what body says.
func fakeChromium(t *testing.T, body string) {
	t.Helper()
	bin := t.TempDir()
	if body != "" {
		if err := os.WriteFile(filepath.Join(bin, "chromium"), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
}

// printPDF never fails the qualification and never hangs it: each way of
// getting no PDF gives a reason and leaves no PDF behind, a stale one
// from an earlier (resumed) qualification included; a browser that
// prints gives the PDF, renamed into place.
func TestPrintPDF(t *testing.T) {
	// A browser that hangs, its child too (a renderer holding stderr
	// open): both are killed at the bound.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		testenv.Skip(t, testenv.Tool, "sleep (coreutils) is not on PATH: %v", err)
	}
	hang := sleep + " 600 & " + sleep + " 600"
	// What Chromium does: the --print-to-pdf= argument names the file.
	const prints = `for a; do case "$a" in --print-to-pdf=*) printf '%%PDF-1.4 fake' > "${a#--print-to-pdf=}";; esac; done`
	tests := []struct {
		name, chromium string // "" no chromium on PATH
		cancelled      bool
		want           string // in the reason; "" a PDF
	}{
		{"no Chromium", "", false, "no Chromium on PATH (chromium, chromium-browser, google-chrome)"},
		{"hangs", hang, false, "did not print qualification.html within 2s: killed"},
		{"fails", "echo 'cannot open display' >&2; exit 1", false, "exit status 1: cannot open display"},
		{"prints no PDF", "exit 0", false, "printed no PDF"},
		{"prints what is no PDF", `for a; do case "$a" in --print-to-pdf=*) echo '<html>' > "${a#--print-to-pdf=}";; esac; done`, false, "not a PDF"},
		{"interrupted", prints, true, "the qualification was interrupted"},
		{"prints", prints, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeChromium(t, tt.chromium)
			old := pdfTimeout
			pdfTimeout = 2 * time.Second
			t.Cleanup(func() { pdfTimeout = old })
			dir := t.TempDir()
			page, pdf := filepath.Join(dir, HTMLFile), filepath.Join(dir, PDFFile)
			if err := os.WriteFile(page, []byte("<p>PASS</p>"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(pdf, []byte("%PDF- of an earlier verdict"), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tt.cancelled {
				cancel()
			}
			defer cancel()
			t0 := time.Now()
			err := printPDF(ctx, page, pdf)
			if took := time.Since(t0); took > pdfTimeout+10*time.Second {
				t.Errorf("printPDF took %v, bound %v", took, pdfTimeout)
			}
			data, rerr := os.ReadFile(pdf)
			if tt.want == "" {
				if err != nil || string(data) != "%PDF-1.4 fake" {
					t.Errorf("err %v, PDF %q: want the printed PDF", err, data)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") || rerr == nil {
				t.Errorf("err %v, PDF left %v: want one line with %q and no PDF", err, rerr == nil, tt.want)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
				t.Errorf("left %v behind", left)
			}
		})
	}
}
