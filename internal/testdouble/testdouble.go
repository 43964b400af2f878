// Package testdouble is for tests that load the libibverbs test double
// (verbs/fakeverbs, built into build/fakeverbs by make fakeverbs) in a
// child process: where the double is, a skip saying how to build it when
// it is not, and the environment that makes a process load it. Only
// tests import it.
package testdouble

import (
	"os"
	"path/filepath"
	"testing"
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
