//go:build soak

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// TestSoak is `make soak`: lifecycle at 8 processes x 2 threads on the sim
// device with a cost model, for SOAK_DURATION (default 10m). Every
// SOAK_EVERY (default 10s) it samples each worker's RSS and PSS
// (/proc/PID/smaps_rollup) and the device's live QP count. It fails when
//   - a worker's memory grows: the median of its last three samples
//     exceeds the median of its first three by more than soakGrowth
//     (10%) plus soakSlackKiB (4 MiB), for RSS or PSS;
//   - the device ever holds more live QPs than the run's --qps (each QP
//     of a round is destroyed before the round's next is made), or any
//     outlives the run (the result's leak check);
//   - the run does not end ok.
//
// The figures go to the log and to $SOAK_OUT/soak.txt (default: a
// temporary folder).
const (
	soakGrowth   = 0.10
	soakSlackKiB = 4096
	soakQPs      = 4
)

type soakSample struct {
	at       time.Duration
	rss, pss map[int]int64 // by worker pid, KiB
	liveQPs  int
}

func TestSoak(t *testing.T) {
	bin := engineBinary(t)
	duration := envDuration(t, "SOAK_DURATION", 10*time.Minute)
	every := envDuration(t, "SOAK_EVERY", 10*time.Second)
	outDir := os.Getenv("SOAK_OUT")
	if outDir == "" {
		outDir = t.TempDir()
	}
	tmp := t.TempDir() // the run's private folder, and so its device, is found here
	run := filepath.Join(outDir, "run")
	cmd := exec.Command(bin, "run", "--provider", "sim", "--workload", "lifecycle", "--procs", "8", "--threads", "2",
		"--qps", strconv.Itoa(soakQPs), "--duration", duration.String(), "--warmup", "2s",
		"--sim-cost", "reg=2us,unreg=2us,destroy=200us", "--out", run)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	start := time.Now()
	var samples []soakSample
	tick := time.NewTicker(every)
	defer tick.Stop()
	var runErr error
loop:
	for {
		select {
		case runErr = <-done:
			break loop
		case <-tick.C:
			s := soakSample{at: time.Since(start).Round(time.Second), rss: map[int]int64{}, pss: map[int]int64{}, liveQPs: -1}
			for _, pid := range host.ChildPIDs(cmd.Process.Pid) {
				if rss, pss, err := host.ProcessMemory(pid); err == nil {
					s.rss[pid], s.pss[pid] = rss, pss
				}
			}
			if devs, _ := filepath.Glob(filepath.Join(tmp, "xrcbench-run-*", "rep*", "sim")); len(devs) == 1 {
				if snap, err := verbs.InspectSim(devs[0]); err == nil {
					s.liveQPs = len(snap.QPs)
				}
			}
			if len(s.rss) > 0 {
				samples = append(samples, s)
			}
		}
	}
	if runErr != nil {
		t.Fatalf("run: %v\n%s", runErr, stderr.String())
	}
	r, err := results.Load(run)
	if err != nil {
		t.Fatal(err)
	}

	var report strings.Builder
	fmt.Fprintf(&report, "soak: lifecycle 8x2, --qps %d, sim cost reg=2us,unreg=2us,destroy=200us, %v, sampled every %v\n",
		soakQPs, duration, every)
	fmt.Fprintf(&report, "%8s %8s %14s %14s %14s %14s\n", "at", "liveQPs", "rss min KiB", "rss max KiB", "pss min KiB", "pss max KiB")
	maxLive := 0
	for _, s := range samples {
		maxLive = max(maxLive, s.liveQPs)
		fmt.Fprintf(&report, "%8v %8d %14d %14d %14d %14d\n", s.at, s.liveQPs,
			slices.Min(values(s.rss)), slices.Max(values(s.rss)), slices.Min(values(s.pss)), slices.Max(values(s.pss)))
	}
	var failures []string
	if len(samples) < 6 {
		failures = append(failures, fmt.Sprintf("only %d samples: run longer than 6 x SOAK_EVERY", len(samples)))
	}
	growth := func(what string, get func(soakSample) map[int]int64) {
		for pid := range get(samples[0]) {
			var series []int64
			for _, s := range samples {
				if v, ok := get(s)[pid]; ok {
					series = append(series, v)
				}
			}
			if len(series) < 6 {
				continue
			}
			first, last := median(series[:3]), median(series[len(series)-3:])
			bound := int64(float64(first)*(1+soakGrowth)) + soakSlackKiB
			fmt.Fprintf(&report, "worker %d %s: first %d KiB, last %d KiB, bound %d KiB\n", pid, what, first, last, bound)
			if last > bound {
				failures = append(failures, fmt.Sprintf("worker %d %s grew from %d to %d KiB (bound %d)", pid, what, first, last, bound))
			}
		}
	}
	if len(samples) > 0 {
		growth("rss", func(s soakSample) map[int]int64 { return s.rss })
		growth("pss", func(s soakSample) map[int]int64 { return s.pss })
	}
	if maxLive > soakQPs {
		failures = append(failures, fmt.Sprintf("%d live QPs at once, more than --qps %d", maxLive, soakQPs))
	}
	if maxLive < 0 {
		failures = append(failures, "the device's live QPs could not be read")
	}
	if r.Leaks != nil && len(r.Leaks.Leaked) > 0 {
		failures = append(failures, fmt.Sprintf("QPs outlived the run: %v", r.Leaks.Leaked))
	}
	if r.Status != results.StatusOK {
		failures = append(failures, fmt.Sprintf("status %s: %s", r.Status, r.Error))
	}
	for _, kind := range []string{"create", "reg", "unreg", "unreg_last"} {
		fmt.Fprintf(&report, "%s: %d ops, p50 %dns, p99 %dns\n", kind, r.Ops[kind].Count, r.Ops[kind].NS.P50, r.Ops[kind].NS.P99)
	}
	fmt.Fprintf(&report, "max live QPs %d; leaks %v; status %s\n", maxLive, leaked(r), r.Status)
	if len(failures) > 0 {
		fmt.Fprintf(&report, "FAIL: %s\n", strings.Join(failures, "; "))
	} else {
		fmt.Fprintf(&report, "PASS\n")
	}
	t.Log("\n" + report.String())
	os.WriteFile(filepath.Join(outDir, "soak.txt"), []byte(report.String()), 0o644)
	if len(failures) > 0 {
		t.Fatal(strings.Join(failures, "; "))
	}
}

func leaked(r *results.Result) any {
	if r.Leaks == nil {
		return "not checked"
	}
	return len(r.Leaks.Leaked)
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a duration like 10m", name, v)
	}
	return d
}

func values(m map[int]int64) []int64 {
	var out []int64
	for _, v := range m {
		out = append(out, v)
	}
	if len(out) == 0 {
		return []int64{0}
	}
	return out
}

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
