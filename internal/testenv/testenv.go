// Package testenv says what a test needs of its machine, in one place:
// a test that lacks it skips, naming the need and how to meet it, and
// where nothing may be missing (XRCBENCH_TEST_REQUIRE=1, which .ci/run
// sets, as VMTEST_REQUIRE does for make vmtest) the same skip fails.
//
// A long test's skip never fails (make test-long runs them,
// XRCBENCH_TEST_LONG=1), nor do the tests' own skips on a machine too busy
// to judge a time: that is the machine's state, not a missing install.
package testenv

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// Need is what a test needs of the machine.
type Need string

// The needs .ci/run provides: under XRCBENCH_TEST_REQUIRE=1 their
// absence is a failure.
const (
	Root     Need = "root"                       // root, for another uid's folders, mounts, namespaces
	CC       Need = "a C compiler"               // cc, for the C reference loops and header checks
	Headers  Need = "rdma-core's headers"        // libibverbs-dev: the double, the ABI check
	Double   Need = "the libibverbs test double" // make fakeverbs
	Node     Need = "Node.js and hdr-histogram-js"
	Chromium Need = "Chromium"
	Tool     Need = "a tool"   // a command .ci/run installs (man, bash-completion, ibv_devinfo, pdftoppm, ...)
	Kernel   Need = "a kernel" // a kernel facility: unshare, smaps_rollup, schedstat, ...
)

// RequireEnv makes a missing need a failure.
const RequireEnv = "XRCBENCH_TEST_REQUIRE"

// LongEnv runs the long tests.
const LongEnv = "XRCBENCH_TEST_LONG"

// Required reports whether every need must be met here.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Skip skips t for want of need, saying why; under XRCBENCH_TEST_REQUIRE=1
// it fails instead: the machine was meant to have it.
func Skip(t testing.TB, need Need, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf("needs %s: %s", need, fmt.Sprintf(format, args...))
	if Required() {
		t.Fatalf("%s (%s=1: nothing may be missing here)", why, RequireEnv)
	}
	t.Skip(why)
}

// Long skips t unless XRCBENCH_TEST_LONG=1 (make test-long): a test of
// minutes (a scale, a soak, a build from scratch) that make test, which
// a newcomer runs, leaves out. what says what makes it long.
func Long(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(LongEnv) != "1" {
		t.Skipf("long (%s): make test-long runs it (%s=1)", what, LongEnv)
	}
}

// HostileFile puts at path what a bounded reader must refuse without
// blocking or growing: kind "fifo", a FIFO no one writes, or any other
// kind, a link to /dev/zero.
func HostileFile(t testing.TB, path, kind string) {
	t.Helper()
	var err error
	if kind == "fifo" {
		err = syscall.Mkfifo(path, 0o644)
	} else {
		err = os.Symlink("/dev/zero", path)
	}
	if err != nil {
		t.Fatal(err)
	}
}
