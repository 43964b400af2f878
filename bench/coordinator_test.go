package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// BuildID is the Go build ID of the running image, as go tool buildid
// reads it from the file.
func TestBuildID(t *testing.T) {
	out, err := exec.Command("go", "tool", "buildid", os.Args[0]).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	if got, want := BuildID(), strings.TrimSpace(string(out)); got != want {
		t.Errorf("BuildID() = %q, want %q", got, want)
	}
}

// A worker of another build is refused at its ready message, naming both
// builds (issue 43, item 5): a worker started by path from a binary
// replaced during the run measured the new program, in a result that
// named the old one.
func TestReadyFromAnotherBuild(t *testing.T) {
	tests := []struct {
		name, build string
		want        string // "" accepted
	}{
		{"its own build", BuildID(), ""},
		{"another build", "x/y/z", `worker 0 (pid 42) is another build of xrcbench (version "v9", build id "x/y/z") than its coordinator`},
		{"a worker that says none", "", `build id ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &coordinator{}
			w := &workerProc{index: 0, pid: 42, threads: 1}
			err := c.handle(event{w: w, msg: &message{Type: msgReady, Ready: &readyMsg{CPUs: []int{-1}, Build: tt.build, Version: "v9"}}}, nil, false)
			if tt.want == "" && (err != nil || !w.ready) || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("handle(ready from build %q) = %v (ready %v), want %q", tt.build, err, w.ready, tt.want)
			}
		})
	}
}
