package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// A worker that cannot be started leaves no pipe open behind it: repeated
// failures (a wrong binary in a sweep) must not run the coordinator out of
// descriptors.
func TestSpawnFailureClosesPipes(t *testing.T) {
	c := &coordinator{opts: Options{WorkerExe: filepath.Join(t.TempDir(), "no-such-worker")}}
	events := make(chan event, 1)
	before := openFDs(t)
	for i := 0; i < 20; i++ {
		if _, err := c.spawn(0, &workerConfig{Threads: 1}, events); err == nil {
			t.Fatal("spawn of a missing binary succeeded")
		}
	}
	if after := openFDs(t); after > before {
		t.Errorf("%d descriptors open after 20 failed spawns, %d before", after, before)
	}
}
