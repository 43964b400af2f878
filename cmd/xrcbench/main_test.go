package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// runProcess runs cmd to its end and returns its exit status and output;
// a process that could not be run at all is -1, with the reason in stderr.
func runProcess(cmd *exec.Cmd) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		code = -1
		e.WriteString(err.Error())
	}
	return code, o.String(), e.String()
}
