package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/xrcbench/xrcbench/verbs"
)

func TestMain(m *testing.M) {
	// conform's multi-process checks re-execute this test binary.
	verbs.MaybeRunChild()
	os.Exit(runTests(m))
}

// runTests gives the tests, and every process they start, a temporary
// directory of their own (TMPDIR), removed at the end: binaries the tests
// build and the private directories of coordinators they kill on purpose
// are not left behind in /tmp.
func runTests(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "xrcbench-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	os.Setenv("TMPDIR", tmp)
	return m.Run()
}
