// Package testdouble is for tests that load the libibverbs test double
// (verbs/fakeverbs, built into build/fakeverbs by make fakeverbs) in a
// child process: where the double is, a skip saying how to build it when
// it is not, and the environment that makes a process load it. Only
// tests import it.
package testdouble

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// LibDir is the folder holding the double's libibverbs.so.1, found from
// the module root above the test's folder; where it is not built (no
// rdma-core headers here), t skips with the reason and the remedy.
func LibDir(t testing.TB) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "build", "fakeverbs")
	if _, err := os.Stat(filepath.Join(dir, "libibverbs.so.1")); err != nil {
		t.Skipf("the libibverbs test double is not built (%s): run make fakeverbs (needs libibverbs-dev)", dir)
	}
	return dir
}

// MlnxLibDir is the folder of the double built to play MLNX_OFED's
// libibverbs (build/fakeverbs/mlnx-compat), or a skip as LibDir's.
func MlnxLibDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(LibDir(t), "mlnx-compat")
	if _, err := os.Stat(filepath.Join(dir, "libibverbs.so.1")); err != nil {
		t.Skipf("the MLNX_OFED build of the test double is not built (%s): run make fakeverbs", dir)
	}
	return dir
}

// Env is the environment of a process that loads the double from lib,
// keeps the double's state (its devices' QPs, shared by every process of
// one test) in stateDir, and lists the devices spec devices
// (XRCBENCH_FAKEVERBS_DEVICES). Callers append their own settings.
func Env(lib, stateDir, devices string) []string {
	ld := lib
	if old := os.Getenv("LD_LIBRARY_PATH"); old != "" {
		ld += ":" + old
	}
	return append(os.Environ(), "LD_LIBRARY_PATH="+ld, "XRCBENCH_FAKEVERBS_DIR="+stateDir,
		"XRCBENCH_FAKEVERBS_DEVICES="+devices)
}

// RunTest runs the test named test of this test binary in a child process
// with environment env (Env's, with the caller's settings): the dynamic
// linker picks libibverbs at exec time, so only a child can load the
// double. The child's failure, or a child that did not pass test, fails
// t; its output is logged. A child that hangs (a lock never released)
// gets SIGQUIT after 2 minutes, its goroutine dump saying where, so the
// test fails in bounded time instead of stalling the whole run.
func RunTest(t testing.TB, test string, env []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", test, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("child %s did not pass:\n%s", test, out)
	}
	t.Logf("child %s:\n%s", test, out)
}

// moduleRoot is the nearest folder at or above the working directory (a
// test runs in its package's folder) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// Sysfs lays out /sys/class/infiniband/<name> in a temporary folder as
// the kernel does for a PCI adapter (its device link, driver and NUMA
// node, a board_id) and returns the class directory, for tests of what
// is read from sysfs.
func Sysfs(t *testing.T, name, pci, driver, numa string) string {
	t.Helper()
	root := t.TempDir()
	dev := filepath.Join(root, "devices", "pci0000:00", pci)
	drv := filepath.Join(root, "bus", "pci", "drivers", driver)
	cls := filepath.Join(root, "class", "infiniband", name)
	for _, d := range []string{dev, drv, cls} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if numa != "" {
		must(os.WriteFile(filepath.Join(dev, "numa_node"), []byte(numa+"\n"), 0o644))
	}
	must(os.Symlink(drv, filepath.Join(dev, "driver")))
	must(os.Symlink(dev, filepath.Join(cls, "device")))
	must(os.WriteFile(filepath.Join(cls, "board_id"), []byte("MT_0000000010\n"), 0o644))
	return cls
}
