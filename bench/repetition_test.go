package bench

import (
	"testing"

	"github.com/xrcbench/xrcbench/workloads"
)

// The repetition's wall time runs from the first thread's start to the
// last one's end, its skew from the first start to the last.
func TestThreadSpan(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		threads                    []threadResult
		minStart, maxStart, maxEnd uint64
	}{
		{"none", nil, 0, 0, 0},
		{"one", []threadResult{{Started: 100, Ended: 900}}, 100, 100, 900},
		{"earliest start not first", []threadResult{{Started: 120, Ended: 900}, {Started: 100, Ended: 950}, {Started: 130, Ended: 910}}, 100, 130, 950},
		{"last start ends first", []threadResult{{Started: 100, Ended: 990}, {Started: 300, Ended: 400}}, 100, 300, 990},
	} {
		t.Run(tc.name, func(t *testing.T) {
			minStart, maxStart, maxEnd := threadSpan(tc.threads)
			if minStart != tc.minStart || maxStart != tc.maxStart || maxEnd != tc.maxEnd {
				t.Errorf("threadSpan = %d, %d, %d; want %d, %d, %d", minStart, maxStart, maxEnd, tc.minStart, tc.maxStart, tc.maxEnd)
			}
		})
	}
}

// Each worker gets its own slice of the job's threads, and the holder's
// QPs; a storm's workers learn the job's node count.
func TestWorkerConfigShares(t *testing.T) {
	steady, err := workloads.Get("steady")
	if err != nil {
		t.Fatal(err)
	}
	storm, err := workloads.Get("storm")
	if err != nil {
		t.Fatal(err)
	}
	h := &holder{domain: "/d", held: []uint32{7, 8}}
	for _, tc := range []struct {
		name      string
		cfg       Config
		p         int
		base      int
		stormNode int
	}{
		{"first of three", Config{Workload: steady, Procs: 3, Threads: 2, QPs: 4}, 0, 0, 0},
		{"last of three", Config{Workload: steady, Procs: 3, Threads: 2, QPs: 4}, 2, 4, 0},
		{"storm, workload's nodes", Config{Workload: storm, Procs: 2, Threads: 2}, 1, 2, storm.Storm.Nodes},
		{"storm, --nodes", Config{Workload: storm, Procs: 2, Threads: 2, Nodes: 5}, 1, 2, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &coordinator{cfg: tc.cfg}
			wc := c.workerConfig(tc.p, c.repVerbs("/rep1"), h, "/rep1")
			if wc.Index != tc.p || wc.ThreadBase != tc.base || wc.Threads != tc.cfg.Threads || wc.TotalThreads != tc.cfg.Procs*tc.cfg.Threads {
				t.Errorf("worker %d: threads %d at %d of %d; want %d at %d of %d", wc.Index, wc.Threads, wc.ThreadBase, wc.TotalThreads,
					tc.cfg.Threads, tc.base, tc.cfg.Procs*tc.cfg.Threads)
			}
			if wc.StormNodes != tc.stormNode {
				t.Errorf("storm nodes %d, want %d", wc.StormNodes, tc.stormNode)
			}
			if wc.Shm != "/rep1/barrier" || wc.Domain != "/d" || wc.Verbs.Sim.Dir != "/rep1/sim" || len(wc.Held) != 2 {
				t.Errorf("worker's files and QPs: shm %q, domain %q, sim %q, held %v", wc.Shm, wc.Domain, wc.Verbs.Sim.Dir, wc.Held)
			}
			if wc.WorkloadSpec != tc.cfg.Workload.Source {
				t.Error("the worker is not sent the workload's text")
			}
		})
	}
}

// A storm's teardown time is measured only for teardown exit, and not
// after a stopped run (its ranks did not all exit on their own).
func TestStormExitPolicy(t *testing.T) {
	steady, err := workloads.Get("steady")
	if err != nil {
		t.Fatal(err)
	}
	unreg, err := workloads.Get("storm")
	if err != nil {
		t.Fatal(err)
	}
	exit := *unreg
	st := *unreg.Storm
	st.Teardown = workloads.TeardownExit
	exit.Storm = &st
	for _, tc := range []struct {
		name     string
		spec     *workloads.Spec
		draining bool
		note     string
	}{
		{"not a storm", steady, false, ""},
		{"teardown unreg", unreg, false, ""},
		{"teardown unreg, stopped", unreg, true, ""},
		{"teardown exit, stopped", &exit, true, "the run was stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &repRun{c: &coordinator{cfg: Config{Workload: tc.spec}}, draining: tc.draining}
			ns, note := r.stormExit(r.c.repVerbs(t.TempDir()))
			if ns != -1 || note != tc.note {
				t.Errorf("stormExit = %d, %q; want -1, %q", ns, note, tc.note)
			}
		})
	}
}
