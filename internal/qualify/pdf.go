package qualify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// PDFFile is qualification.html printed by headless Chromium: what a
// vendor attaches to a release.
const PDFFile = "qualification.pdf"

// chromiumNames are the names Chromium goes by on PATH, the first found
// printing the PDF.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome"}

// pdfTimeout bounds Chromium's print: a browser that hangs (no display
// libraries, a wedged renderer) must not hang the qualification, whose
// verdict is already decided. Chromium prints the page in seconds; the
// margin is for a loaded machine. A variable for the test of the bound.
var pdfTimeout = 2 * time.Minute

// printPDF prints the page at htmlPath into pdfPath with headless
// Chromium, within pdfTimeout. It returns why there is no PDF: no
// Chromium on PATH, the qualification interrupted, Chromium failing or
// running past the bound. A stale PDF from an earlier (resumed) run is
// removed first, so the folder never holds a PDF of another verdict.
func printPDF(ctx context.Context, htmlPath, pdfPath string) error {
	if err := os.Remove(pdfPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if ctx.Err() != nil {
		// After ^C the reader wants the folder now, not a browser.
		return fmt.Errorf("not printed: the qualification was interrupted")
	}
	var bin string
	for _, name := range chromiumNames {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		return fmt.Errorf("no Chromium on PATH (%s) to print %s with: install chromium for the PDF", strings.Join(chromiumNames, ", "), filepath.Base(htmlPath))
	}
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return err
	}
	// Chromium writes where it is told, not atomically: a temporary name
	// beside the PDF, renamed once Chromium is done and the file is one.
	tmp := pdfPath + ".tmp"
	defer os.Remove(tmp)
	profile, err := os.MkdirTemp("", "xrcbench-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)

	tctx, cancel := context.WithTimeout(context.Background(), pdfTimeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--no-pdf-header-footer", "--print-to-pdf="+tmp, "file://"+abs)
	// Chromium starts a renderer, a GPU and a zygote process: on the
	// timeout the whole group goes, not just the browser, or a child
	// holding its output open would keep Wait waiting.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if cmd.Process != nil {
		// A renderer that outlived a browser which exited by itself.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if tctx.Err() != nil {
		return fmt.Errorf("%s did not print %s within %v: killed", bin, filepath.Base(htmlPath), pdfTimeout)
	}
	if err != nil {
		return fmt.Errorf("%s: %v%s", bin, err, lastLine(stderr.String()))
	}
	data, err := os.ReadFile(tmp)
	if err != nil {
		return fmt.Errorf("%s printed no PDF: %v%s", bin, err, lastLine(stderr.String()))
	}
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return fmt.Errorf("%s printed %d bytes that are not a PDF", bin, len(data))
	}
	return os.Rename(tmp, pdfPath)
}

// lastLine is the last non-empty line of Chromium's stderr, which says
// why it failed, as ": line"; "" when it said nothing.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		if len(l) > 200 {
			l = l[:200] + "…"
		}
		return ": " + l
	}
	return ""
}
