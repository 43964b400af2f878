package verbs

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// Multi-process checks re-execute the test binary as their children.
	MaybeRunChild()
	os.Exit(m.Run())
}
