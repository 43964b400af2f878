package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// launcherFree clears the launcher's variables, so a test run inside a
// Slurm job or under mpirun sees the environment it means to.
func launcherFree(t *testing.T) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SLURM") || strings.HasPrefix(k, "OMPI_") || strings.HasPrefix(k, "PMIX_") {
			t.Setenv(k, "")
		}
	}
}

// nodeEnv is a fleet task's environment, as srun would set it.
func nodeEnv(job string, rank, nodes int, node, nodelist string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "SLURM") && !strings.HasPrefix(k, "OMPI_") && !strings.HasPrefix(k, "PMIX_") {
			env = append(env, kv)
		}
	}
	return append(env, "SLURM_JOB_ID="+job, fmt.Sprintf("SLURM_PROCID=%d", rank), fmt.Sprintf("SLURM_NNODES=%d", nodes),
		"SLURMD_NODENAME="+node, "SLURM_LOCALID=0", "SLURM_JOB_NODELIST="+nodelist)
}

// --fleet outside a launcher, a second task on a node and bad --fleet-sync
// values are bad usage: one line, exit 2, nothing written.
func TestFleetBadInput(t *testing.T) {
	launcherFree(t)
	slurm := map[string]string{"SLURM_JOB_ID": "9", "SLURM_PROCID": "0", "SLURM_NNODES": "2", "SLURMD_NODENAME": "n1"}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no launcher", []string{"--fleet"}, nil, "--fleet: no launcher found in the environment"},
		{"sync without fleet", []string{"--fleet-sync"}, slurm, "--fleet-sync needs --fleet"},
		{"bad deadline", []string{"--fleet", "--fleet-sync=soon"}, slurm, "--fleet-sync=soon: want a deadline"},
		{"negative deadline", []string{"--fleet", "--fleet-sync=-1s"}, slurm, "--fleet-sync=-1s"},
		{"second task", []string{"--fleet"}, map[string]string{"SLURM_JOB_ID": "9", "SLURM_PROCID": "1", "SLURMD_NODENAME": "n1", "SLURM_LOCALID": "1"},
			"task 1 is the second task on node n1"},
		// A hostile or broken launcher: a node count, or a node list of a
		// few bytes, bigger than a fleet may have (once 30 M names, 2.7 GB,
		// and a result.json too big for report).
		{"huge SLURM_NNODES", []string{"--fleet", "--fleet-sync=1s"}, map[string]string{"SLURM_JOB_ID": "9", "SLURM_PROCID": "0", "SLURM_NNODES": "2000000000", "SLURMD_NODENAME": "n1"},
			"SLURM_NNODES=2000000000: more than the 65536 nodes a fleet may have"},
		{"huge node list", []string{"--fleet", "--fleet-sync=1s"}, map[string]string{"SLURM_JOB_ID": "9", "SLURM_PROCID": "0", "SLURM_NNODES": "2", "SLURMD_NODENAME": "n1",
			"SLURM_JOB_NODELIST": "n[0-99999],m[0-99999]"}, "SLURM_JOB_NODELIST names more than 65536 nodes"},
		{"job id unfit for a folder", []string{"--fleet", "--fleet-sync=1s"}, map[string]string{"SLURM_JOB_ID": "../9", "SLURM_PROCID": "0", "SLURM_NNODES": "2", "SLURMD_NODENAME": "n1"},
			`gives no job id fit for a folder name ("../9")`},
		{"node count unknown", []string{"--fleet", "--fleet-sync"}, map[string]string{"PMIX_RANK": "0", "PMIX_NAMESPACE": "j"},
			"does not say how many nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			code := run(&stdout, &stderr, append([]string{"run", "--out", filepath.Join(dir, "fleet")}, tt.args...))
			msg := stderr.String()
			if code != exitUsage || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tt.want) {
				t.Errorf("exit %d, stderr %q: want exit 2 and one line containing %q", code, msg, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "fleet")); err == nil {
				t.Error("the output folder was created")
			}
		})
	}
	// Root's node into a shared --out any user can write: that user could
	// swap the node's folder for a link (TestTwoUsersRacingRenamer).
	t.Run("as root, a shared --out others can write", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("the mode matters to root only")
		}
		for k, v := range slurm {
			t.Setenv(k, v)
		}
		shared := filepath.Join(t.TempDir(), "fleet")
		os.Mkdir(shared, 0o755)
		os.Chmod(shared, 0o777)
		var stdout, stderr bytes.Buffer
		code := run(&stdout, &stderr, []string{"run", "--provider", "null", "--workload", "steady", "--iterations", "20", "--out", shared, "--fleet"})
		msg := stderr.String()
		if want := "other users can write it (mode 0777, no sticky bit)"; code != exitUsage || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, want) {
			t.Errorf("exit %d, stderr %q: want exit 2 and one line containing %q", code, msg, want)
		}
		if ents, _ := os.ReadDir(shared); len(ents) != 0 {
			t.Errorf("the shared folder holds %v", ents)
		}
	})
	t.Run("no --out", func(t *testing.T) {
		t.Setenv("SLURM_JOB_ID", "9")
		t.Setenv("SLURM_PROCID", "0")
		var stdout, stderr bytes.Buffer
		code := run(&stdout, &stderr, []string{"run", "--fleet"})
		if code != exitUsage || !strings.Contains(stderr.String(), "--fleet needs --out") {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
	})
}

// Three nodes of one job, each its own process as srun starts them, meet
// at the barrier and start at one time; each writes <out>/<node>/ with its
// place in the fleet and the clock offsets all of them saw.
func TestFleetSyncRun(t *testing.T) {
	bin := engineBinary(t)
	out := filepath.Join(t.TempDir(), "fleet")
	nodes := []string{"n1", "n2", "n3"}
	var wg sync.WaitGroup
	errs := make([]string, len(nodes))
	for i, node := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "run", "--provider", "null", "--workload", "steady", "--qps", "2",
				"--iterations", "20", "--warmup", "0s", "--quiet", "--fleet", "--fleet-sync=60s", "--out", out)
			cmd.Env = nodeEnv("1001", i, len(nodes), node, "n[1-3]")
			if code, stdout, stderr := runProcess(cmd); code != 0 {
				errs[i] = fmt.Sprintf("%s: exit %d\n%s\n%s", node, code, stdout, stderr)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
	var start string
	for i, node := range nodes {
		r, err := results.Load(filepath.Join(out, node))
		if err != nil {
			t.Fatal(err)
		}
		f := r.Fleet
		if f == nil || f.Launcher != "slurm" || f.JobID != "1001" || f.Node != node || f.Rank != i || f.Nodes != 3 || len(f.NodeList) != 3 || f.Sync == nil {
			t.Fatalf("%s: fleet %+v", node, f)
		}
		if len(f.Sync.Offsets) != 3 || f.Sync.Offsets[node] != f.Sync.ClockOffsetNS {
			t.Errorf("%s: offsets %v, own %d", node, f.Sync.Offsets, f.Sync.ClockOffsetNS)
		}
		if s := f.Sync.StartAt.String(); start == "" {
			start = s
		} else if s != start {
			t.Errorf("%s starts at %s, another node at %s: no common start", node, s, start)
		}
	}
}

// A node whose peers never come gives up at the deadline, naming them,
// and still writes its result, failed: the fleet report lists it.
func TestFleetSyncMissingNode(t *testing.T) {
	bin := engineBinary(t)
	out := filepath.Join(t.TempDir(), "fleet")
	cmd := exec.Command(bin, "run", "--provider", "null", "--workload", "steady", "--qps", "2",
		"--iterations", "20", "--warmup", "0s", "--quiet", "--fleet", "--fleet-sync=1s", "--out", out)
	cmd.Env = nodeEnv("1002", 0, 3, "n1", "n[1-3]")
	code, _, stderr := runProcess(cmd)
	if code != exitFailed || !strings.Contains(stderr, "never arrived: n2, n3") {
		t.Fatalf("exit %d, stderr %q: want 1 naming n2 and n3", code, stderr)
	}
	r, err := results.Load(filepath.Join(out, "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusFailed || !strings.Contains(r.Error, "never arrived: n2, n3") || r.Fleet == nil || r.Fleet.Node != "n1" {
		t.Errorf("status %s, error %q, fleet %+v", r.Status, r.Error, r.Fleet)
	}
}

// writeNode writes a node's run folder whose reg ops take about p50 ns.
func writeNode(t *testing.T, dir, node string, p50 int64) {
	t.Helper()
	h := results.NewHistogram()
	for i := int64(0); i < 500; i++ {
		h.RecordValue(p50 + i%5)
	}
	enc, err := results.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	r := &results.Result{
		Schema: results.Schema, RunID: "r-" + node, Status: results.StatusOK,
		Config:     results.Config{Workload: "steady", Provider: "sim", Procs: 1, Threads: 1, QPs: 1},
		Ops:        map[string]results.OpStats{"reg": {Count: 500, OpsPerSec: 1e9 / float64(p50), NS: results.Summarize(h)}},
		Histograms: map[string]string{"reg": enc},
		Fleet:      &results.Fleet{Launcher: "slurm", JobID: "5", Node: node},
	}
	if err := os.MkdirAll(filepath.Join(dir, node), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.Write(filepath.Join(dir, node), r); err != nil {
		t.Fatal(err)
	}
}

// writeNodeReps writes a node's run folder of reps repetitions whose reg
// p50s are around p50 ns with σ 1.5% (seeded): a quiet fleet's node.
func writeNodeReps(t *testing.T, dir, node string, p50 float64, reps int, rng *rand.Rand) {
	t.Helper()
	r := &results.Result{
		Schema: results.Schema, RunID: "r-" + node, Status: results.StatusOK,
		Config: results.Config{Workload: "steady", Provider: "sim", Procs: 1, Threads: 1, QPs: 1},
		Ops:    map[string]results.OpStats{},
		Fleet:  &results.Fleet{Launcher: "slurm", JobID: "6", Node: node},
	}
	var p50s []int64
	for i := range reps {
		v := int64(math.Round(p50 * math.Exp(0.015*rng.NormFloat64())))
		p50s = append(p50s, v)
		s := results.OpStats{Count: 500, OpsPerSec: 1e9 / float64(v), NS: results.Latency{Min: v, P50: v, P90: v, P99: v, P999: v, Max: v, Mean: float64(v)}}
		r.Repetitions = append(r.Repetitions, results.Repetition{Index: i + 1, Ops: map[string]results.OpStats{"reg": s}})
	}
	slices.Sort(p50s)
	v := p50s[reps/2]
	r.Ops["reg"] = results.OpStats{Count: int64(500 * reps), OpsPerSec: 1e9 / float64(v), NS: results.Latency{Min: v, P50: v, P90: v, P99: v, P999: v, Max: v, Mean: float64(v)}}
	if err := os.MkdirAll(filepath.Join(dir, node), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.Write(filepath.Join(dir, node), r); err != nil {
		t.Fatal(err)
	}
}

// report --fleet on 6 nodes × 5 repetitions, n2 10% slow: the U test
// flags it (the robust score cannot), --min-effect decides how much is
// enough, and a bad --min-effect is one line, exit 2.
func TestReportFleetMinEffect(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 7))
	for i := range 6 {
		p := 2000.0
		if i == 1 {
			p *= 1.10
		}
		writeNodeReps(t, dir, fmt.Sprintf("n%d", i+1), p, 5, rng)
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", "--fleet", dir, "--fail-on-outlier"}, exitFailed, "fleet: flagged: n2"},
		{[]string{"report", "--fleet", dir}, exitOK, "flagged n2: reg p50 +"},
		{[]string{"report", "--fleet", dir, "--fail-on-outlier", "--min-effect", "15%"}, exitOK, "no difference of 15% or more"},
		{[]string{"report", "--fleet", dir, "--min-effect", "x"}, exitUsage, "--min-effect \"x\""},
		{[]string{"report", dir, "--min-effect", "5%"}, exitUsage, "need --fleet"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(&stdout, &stderr, tt.args)
			all := stdout.String() + stderr.String()
			if code != tt.code || !strings.Contains(all, tt.want) {
				t.Errorf("exit %d, want %d; output %q lacks %q", code, tt.code, all, tt.want)
			}
			if code == exitUsage && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("stderr %q: want one line", stderr.String())
			}
		})
	}
}

// report --fleet: exit 1 with --fail-on-outlier when a node is flagged,
// 0 without it; bad usage is one line and exit 2.
func TestReportFleetExit(t *testing.T) {
	judgesNoTime(t)
	dir := t.TempDir()
	for i, p := range []int64{1000, 1020, 990, 25000} {
		writeNode(t, dir, fmt.Sprintf("n%d", i+1), p)
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", "--fleet", dir}, exitOK, "flagged n4: reg p50"},
		{[]string{"report", "--fleet", dir, "--fail-on-outlier"}, exitFailed, "fleet: flagged: n4"},
		{[]string{"report", "--fleet", dir, "--fail-on-outlier", "--outlier-threshold", "1000"}, exitOK, "no node departs"},
		{[]string{"report", dir, "--fail-on-outlier"}, exitUsage, "need --fleet"},
		{[]string{"report", "--fleet", dir, dir}, exitUsage, "one fleet folder"},
		{[]string{"report", "--fleet", dir, "--outlier-threshold", "-1"}, exitUsage, "--outlier-threshold -1"},
		{[]string{"report", "--fleet", filepath.Join(dir, "nope")}, exitUsage, "no such fleet folder"},
		{[]string{"report", "--fleet", filepath.Join(dir, "n1")}, exitUsage, "not a fleet folder"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(&stdout, &stderr, tt.args)
			all := stdout.String() + stderr.String()
			if code != tt.code || !strings.Contains(all, tt.want) {
				t.Errorf("exit %d, want %d; output %q lacks %q", code, tt.code, all, tt.want)
			}
			if code == exitUsage && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("stderr %q: want one line", stderr.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "fleet.html")); err != nil {
		t.Error(err)
	}
}

// A FIFO planted in the barrier's folder under another node's name does
// not hold a node at the barrier: ^C stops it at once, as anywhere else,
// and it writes its result, failed.
func TestFleetSyncInterruptedAtPlantedFIFO(t *testing.T) {
	bin := engineBinary(t)
	out := filepath.Join(t.TempDir(), "fleet")
	sync := filepath.Join(out, ".fleet-sync-1003")
	if err := os.MkdirAll(sync, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(sync, "n2.arrived")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // frees a node stuck opening it, before the fix
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	cmd := exec.Command(bin, "run", "--provider", "null", "--workload", "steady", "--qps", "2",
		"--iterations", "20", "--warmup", "0s", "--quiet", "--fleet", "--fleet-sync=1m", "--out", out)
	cmd.Env = nodeEnv("1003", 0, 2, "n1", "n[1-2]")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(1500 * time.Millisecond) // at the barrier, polling
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the node still runs 15s after ^C; stderr %q", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitFailed {
		t.Errorf("exit %d, want 1; stderr %q", code, stderr.String())
	}
	r, err := results.Load(filepath.Join(out, "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusFailed || !strings.Contains(r.Error, "fleet barrier: interrupt") {
		t.Errorf("status %s, error %q", r.Status, r.Error)
	}
}
