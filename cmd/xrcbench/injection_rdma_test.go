package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testdouble"
	"github.com/xrcbench/xrcbench/report"
)

// A device whose name and driver carry escape sequences (the double names
// its devices as told) is listed and measured, and neither the terminal
// nor summary.md gets an ESC or a BEL: they show \x1b and \x07.
func TestHostileDeviceNameThroughDouble(t *testing.T) {
	lib := testdouble.LibDir(t)
	bin := rdmaBinary(t)
	const dev = "xb\x1b[31mred0"
	env := testdouble.Env(lib, filepath.Join(t.TempDir(), "state"), dev+":driver=d\x1b]0;pwned\a")
	out := filepath.Join(t.TempDir(), "run")
	for _, args := range [][]string{
		{"devices"},
		{"run", "--provider", "rdma", "--device", dev, "--workload", "steady", "--qps", "2", "--iterations", "20",
			"--warmup", "0s", "--out", out},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		code, stdout, stderr := runProcess(cmd)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", args[0], code, stdout, stderr)
		}
		if strings.ContainsAny(stdout+stderr, "\x1b\a") {
			t.Errorf("%s prints a control character:\n%q\n%q", args[0], stdout, stderr)
		}
		if args[0] == "devices" && !strings.Contains(stdout, `xb\x1b[31mred0`) {
			t.Errorf("devices does not list the device as xb\\x1b[31mred0:\n%s", stdout)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(string(md), "\x1b\a") || !strings.Contains(string(md), `\x1b`) {
		t.Errorf("summary.md carries the device name's ESC, or does not show it as \\x1b:\n%q", md)
	}
}
