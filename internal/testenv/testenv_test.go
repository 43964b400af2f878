package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSkipOrFail runs this package's child test in a process of its own,
// with and without XRCBENCH_TEST_REQUIRE=1: a missing need skips, or
// fails where nothing may be missing; a long test only ever skips.
func TestSkipOrFail(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		t.Skip("the parent runs the children")
	}
	for _, tt := range []struct {
		child, require string
		fails          bool
		says           string
	}{
		{"TestChildNeed", "", false, "needs root: to give a folder away"},
		{"TestChildNeed", "1", true, "XRCBENCH_TEST_REQUIRE=1: nothing may be missing here"},
		{"TestChildLong", "1", false, "long (10,000 runs): make test-long runs it"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^"+tt.child+"$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", RequireEnv+"="+tt.require, LongEnv+"=")
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tt.fails || !strings.Contains(string(out), tt.says) {
			t.Errorf("%s with %s=%q: failed %v, want %v; output lacks %q?\n%s", tt.child, RequireEnv, tt.require, failed, tt.fails, tt.says, out)
		}
	}
}

func child(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "" {
		t.Skip("runs only as TestSkipOrFail's child")
	}
}

func TestChildNeed(t *testing.T) { child(t); Skip(t, Root, "to give a folder away") }
func TestChildLong(t *testing.T) { child(t); Long(t, "10,000 runs") }
