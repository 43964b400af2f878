package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
)

// On a terminal, the progress shows within 2 s of the start and says where
// the run is: repetition, phase, and per op kind the figures so far.
func TestProgressOnTerminal(t *testing.T) {
	bin := engineBinary(t)
	out := filepath.Join(t.TempDir(), "run")
	ptmx, tty, err := pty.Open()
	if err != nil {
		testenv.Skip(t, testenv.Kernel, "no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--workload", "steady", "--procs", "1", "--threads", "2",
		"--duration", "3s", "--warmup", "500ms", "--out", out)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()

	var mu sync.Mutex
	var screen bytes.Buffer
	var firstSeen time.Duration
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			if firstSeen == 0 && strings.Contains(screen.String(), "repetition 1/1") {
				firstSeen = time.Since(start)
			}
			mu.Unlock()
			if err != nil { // EIO once the child has closed its end
				return
			}
		}
	}()
	err = cmd.Wait()
	<-read
	mu.Lock()
	defer mu.Unlock()
	got := screen.String()
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nterminal:\n%s", err, stdout.String(), got)
	}
	if firstSeen == 0 || firstSeen > 2*time.Second {
		t.Errorf("progress first shown after %v, want within 2s of the start:\n%s", firstSeen, got)
	}
	for _, want := range []string{"repetition 1/1", "measuring", "of 3s", "reg ", "ops/s", "p99", "errors 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal never showed %q:\n%s", want, got)
		}
	}
	if !strings.Contains(stdout.String(), "run folder: "+out) || strings.Contains(stdout.String(), "\x1b[") {
		t.Errorf("stdout is not the plain summary:\n%q", stdout.String())
	}
}

// Not on a terminal (CI, a pipe): no progress display, one line per
// repetition; --quiet prints nothing at all on success.
func TestProgressNotOnTerminal(t *testing.T) {
	dir := t.TempDir()
	base := []string{"run", "--provider", "null", "--workload", "sharded", "--qps", "2", "--iterations", "20000", "--warmup", "0s"}
	tests := []struct {
		name      string
		args      []string
		repLines  int
		quiet     bool
		wantWords []string
	}{
		{"piped", []string{"--repetitions", "2"}, 2, false, []string{"reg", "ops/s", "p99"}},
		{"one repetition", nil, 0, false, nil},
		{"progress never", []string{"--repetitions", "2", "--progress", "never"}, 2, false, nil},
		{"quiet", []string{"--repetitions", "2", "--quiet"}, 0, true, nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, string(rune('a'+i)))
			code, stdout, stderr := runEngine(t, append(append(base, tt.args...), "--out", out)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			if strings.Contains(stderr, "\x1b[") || strings.Contains(stderr, "measuring") {
				t.Errorf("progress display on a pipe:\n%q", stderr)
			}
			if n := strings.Count(stderr, "measured; "); n != tt.repLines {
				t.Errorf("%d repetition lines, want %d:\n%s", n, tt.repLines, stderr)
			}
			for _, w := range tt.wantWords {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tt.quiet && (stdout != "" || stderr != "") {
				t.Errorf("--quiet printed:\nstdout %q\nstderr %q", stdout, stderr)
			}
			if !tt.quiet && !strings.Contains(stdout, "run folder: "+out) {
				t.Errorf("stdout lacks the summary:\n%s", stdout)
			}
			if r, err := results.Load(out); err != nil || r.Status != results.StatusOK {
				t.Errorf("result: %v", err)
			}
		})
	}
}

// --quiet keeps errors: a failed run still says why, in one line.
func TestQuietKeepsErrors(t *testing.T) {
	code, stdout, stderr := runEngine(t, "run", "--provider", "null", "--workload", "errors", "--iterations", "10",
		"--warmup", "0s", "--quiet", "--out", filepath.Join(t.TempDir(), "run"))
	if code != exitFailed || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "unexpected outcome") {
		t.Errorf("exit %d, stdout %q, stderr %q: want exit 1 and one error line", code, stdout, stderr)
	}
	var so, se bytes.Buffer
	if code := run(&so, &se, []string{"run", "--progress", "sometimes"}); code != exitUsage || !strings.Contains(se.String(), "--progress") {
		t.Errorf("--progress sometimes: exit %d, %q", code, se.String())
	}
}

// The display's lines: figures formatted as the summary table's, and a
// line never wider than the terminal.
func TestProgressText(t *testing.T) {
	p := bench.Progress{Repetition: 2, Repetitions: 3, Phase: bench.PhaseDone, Elapsed: 10 * time.Second,
		Kinds: []bench.KindProgress{{Kind: "reg", Count: 12345678, Errors: 2, OpsPerSec: 1234567, P50: 2100, P99: 9800}}}
	if got, want := repetitionLine(p), "repetition 2/3: 10s measured; reg 1.23M ops/s p50 2.10µs p99 9.80µs errors 2"; got != want {
		t.Errorf("repetitionLine = %q, want %q", got, want)
	}
	if got := fit("p50 2.10µs", 8); got != "p50 2.10" {
		t.Errorf("fit = %q", got)
	}
	var buf bytes.Buffer
	v := newProgressView(&buf, progressAuto, false, []string{"reg"}, "")
	v.start(3)
	v.update(p)
	v.finish()
	if !strings.Contains(buf.String(), "repetition 2/3: 10s") || strings.Contains(buf.String(), "\x1b[") {
		t.Errorf("not a terminal: %q", buf.String())
	}
}

// The live display takes the engine's reports and, at the same time, the
// workers' stderr from other goroutines; what they write is all kept.
func TestProgressLiveConcurrentWrites(t *testing.T) {
	var buf syncBuffer
	v := newProgressView(&buf, progressAlways, false, []string{"reg", "unreg"}, "")
	v.start(2)
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				fmt.Fprintf(v, "worker %d: line %d\n", w, i)
			}
		}()
	}
	for rep := 1; rep <= 2; rep++ {
		for i := range 20 {
			v.update(bench.Progress{Repetition: rep, Repetitions: 2, Phase: bench.PhaseMeasuring, Planned: time.Second,
				Elapsed: time.Duration(i) * 50 * time.Millisecond,
				Kinds:   []bench.KindProgress{{Kind: "reg", Count: int64(i), OpsPerSec: float64(i)}}})
		}
		v.update(bench.Progress{Repetition: rep, Repetitions: 2, Phase: bench.PhaseDone, Elapsed: time.Second})
	}
	wg.Wait()
	v.finish()
	got := buf.String()
	for w := range 3 {
		for i := range 20 {
			if line := fmt.Sprintf("worker %d: line %d\n", w, i); !strings.Contains(got, line) {
				t.Errorf("lost %q", line)
			}
		}
	}
	if !strings.Contains(got, "repetition 1/2: 1s measured") || !strings.Contains(got, "repetition 2/2: 1s measured") {
		t.Errorf("repetition lines missing:\n%s", got)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
