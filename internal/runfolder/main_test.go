package runfolder

import (
	"os"
	"testing"
)

// The test binary, re-executed with one of these variables set, is a
// child process of a test: a run that commits for a test to kill, or one
// that takes a folder where nothing can be written.
func TestMain(m *testing.M) {
	if out := os.Getenv(commitEnv); out != "" {
		commitChild(out)
		os.Exit(0)
	}
	if path := os.Getenv(lockPidEnv); path != "" {
		lockPidChild(path)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
