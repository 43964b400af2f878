package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A worker the Go runtime aborts (it could not start a thread under a
// limit: pthread_create failed) is one line in the run's error, with the
// limits to look at, not its goroutine and register dump; the run fails
// as any other (a *RunError, result.json written).
func TestWorkerRuntimeCrashIsOneLine(t *testing.T) {
	// What the runtime writes, then its SIGABRT.
	script := filepath.Join(t.TempDir(), "worker")
	body := "#!/bin/sh\n" +
		"echo 'runtime/cgo: pthread_create failed: Resource temporarily unavailable' >&2\n" +
		"echo 'SIGABRT: abort' >&2\necho 'PC=0x7f62b8679eec m=3 sigcode=18446744073709551610' >&2\n" +
		"echo '' >&2\necho 'goroutine 0 gp=0x14242dbc30e0 m=3 mp=0x14242dc0d008 [idle]:' >&2\n" +
		"echo 'rax    0x0' >&2\nkill -ABRT $$\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, "steady", "sim", 1, 1, 1)
	cfg.Duration = 200 * time.Millisecond
	opts, stderr := testOptions(t)
	opts.WorkerExe, opts.WorkerArgs, opts.WorkerEnv = script, nil, nil
	_, err := Run(context.Background(), cfg, opts)
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("Run: %v, want a *RunError (the result written)", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "pthread_create failed") || !strings.Contains(msg, "ulimit -v") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming pthread_create and the limits", msg)
	}
	if s := stderr.String(); strings.Contains(s, "goroutine") || strings.Contains(s, "SIGABRT") || strings.Contains(s, "rax") {
		t.Errorf("the dump reached stderr:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(cfg.Out, "result.json")); err != nil {
		t.Errorf("result.json: %v", err)
	}
}
