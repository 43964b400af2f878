package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFewRepetitionsSaid: run's default of one repetition makes a run
// compare refuses; run says so on stderr when it ends, with what to rerun
// with, and says nothing of it once there are enough.
func TestFewRepetitionsSaid(t *testing.T) {
	bin := inputBinary(t)
	for _, tt := range []struct {
		reps string
		note bool
	}{{"1", true}, {"5", false}} {
		args := []string{"run", "--workload", "steady", "--duration", "50ms", "--warmup", "0s", "--repetitions", tt.reps,
			"--out", filepath.Join(t.TempDir(), "r")}
		code, stderr := runWithin(t, 2*time.Minute, bin, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		said := strings.Contains(stderr, "note: 1 repetition: ") && strings.Contains(stderr, "compare needs at least 5 per run") &&
			strings.Contains(stderr, "rerun with --repetitions")
		if said != tt.note || !tt.note && strings.Contains(stderr, "compare needs") {
			t.Errorf("--repetitions %s: stderr %q; want the note %v", tt.reps, stderr, tt.note)
		}
	}
}
