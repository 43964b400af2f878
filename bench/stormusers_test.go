package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// The gasnet workload's known answers: however the processes' elections
// race (every rank meets every slot in the same order at the same start),
// each receive QP is created exactly once, by one winner, and opened by
// each other rank: creates = (nodes-1) x ranks x qpi, opens = (ranks-1) x
// that. The teardown drops one handle per rank and QP, the last destroying
// it (unreg_last = QPs), nothing is left, and no operation fails. At
// --qp-state rtr every rank moves the QP it holds, racing the others: the
// sim refuses INIT from RTR and RTR from RTR, so exactly one rank's modify
// per QP gets it from RESET through INIT to RTR and every other rank's is
// modify_raced; at init, INIT to INIT is allowed and none races. Twenty
// repetitions of real worker processes run the election twenty times.
func TestGasnetKnownAnswer(t *testing.T) {
	tests := []struct {
		name           string
		nodes, qpi     int
		procs, threads int
		state          verbs.QPState
		reps           int
		exit           bool // teardown exit: the processes exit holding their handles
	}{
		{"4 processes, qpi 2, reset", 5, 2, 4, 1, verbs.QPReset, 20, false},
		{"2 processes x 2 threads, rtr", 9, 1, 2, 2, verbs.QPRTR, 20, false},
		{"3 processes, init", 4, 1, 3, 1, verbs.QPInit, 5, false},
		{"3 processes, teardown exit", 4, 1, 3, 1, verbs.QPReset, 5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t, "gasnet", "sim", tt.procs, tt.threads, 0)
			// The built-in with its qpi set: workers read the spec's text.
			src := strings.Replace(cfg.Workload.Source, "qpi: 1\n", fmt.Sprintf("qpi: %d\n", tt.qpi), 1)
			if tt.exit {
				src = strings.Replace(src, "teardown: unreg\n", "teardown: exit\n", 1)
			}
			spec, err := workloads.Parse([]byte(src), "gasnet.yaml")
			if err != nil || spec.Storm.Rails != tt.qpi {
				t.Fatalf("gasnet with qpi %d: %v", tt.qpi, err)
			}
			cfg.Workload, cfg.WorkloadArg = spec, "gasnet.yaml"
			cfg.Nodes, cfg.Repetitions, cfg.QPState = tt.nodes, tt.reps, tt.state
			cfg.StormDefaults()
			res := runOK(t, cfg)
			ranks := int64(tt.procs * tt.threads)
			qps := int64((tt.nodes-1)*tt.qpi) * ranks
			reps := int64(tt.reps)
			want := map[string]int64{"create": reps * qps, "reg": reps * qps * (ranks - 1),
				"unreg": reps * qps * (ranks - 1), "unreg_last": reps * qps}
			if tt.exit {
				// The kernel (here the sim device, reaping) drops the
				// handles the processes leave: no unreg is timed.
				delete(want, "unreg")
				delete(want, "unreg_last")
			}
			switch tt.state {
			case verbs.QPRTR:
				want["modify"], want["modify_raced"] = reps*qps, reps*qps*(ranks-1)
			case verbs.QPInit:
				want["modify"], want["modify_raced"] = reps*qps*ranks, 0
			}
			if got := counts(res); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("op counts %v, want %v", got, want)
			}
			for k, s := range res.Ops {
				if s.Errors != 0 {
					t.Errorf("%s: %d errors %v", k, s.Errors, s.ErrnoCounts)
				}
			}
			st := res.Storm
			if st == nil || st.Creators != "elect" || st.QPs != int(qps) || st.Registrations != int(qps*(ranks-1)) ||
				len(st.MakespanNS) != tt.reps || len(st.RankDoneNS) != tt.reps || len(st.TeardownNS) != tt.reps {
				t.Fatalf("storm %+v", st)
			}
			if method := map[bool]string{false: "ranks_unreg", true: "sim_inspect"}[tt.exit]; st.TeardownMethod != method {
				t.Errorf("teardown by %q, want %q", st.TeardownMethod, method)
			}
			for i, mk := range st.MakespanNS {
				if mk <= 0 {
					t.Errorf("repetition %d: makespan %d", i+1, mk)
				}
			}
			// Per repetition, the winners' creates add up to every QP
			// once, and each process holds every QP once (created or
			// opened); how the wins split is the race's, logged.
			created := make([]int64, tt.reps)
			splits := map[string]int{}
			for _, w := range res.Workers {
				created[w.Repetition] += w.Counts["create"]
				if held := w.Counts["create"] + w.Counts["reg"]; held != qps*int64(w.Threads) {
					t.Errorf("repetition %d, worker %d: %d QPs created or opened, want %d", w.Repetition+1, w.Index, held, qps*int64(w.Threads))
				}
			}
			for r := range tt.reps {
				var split []int64
				for _, w := range res.Workers {
					if w.Repetition == r {
						split = append(split, w.Counts["create"])
					}
				}
				splits[fmt.Sprint(split)]++
				if created[r] != qps {
					t.Errorf("repetition %d: %d creates, want %d", r+1, created[r], qps)
				}
			}
			t.Logf("creates per process over %d repetitions: %v", tt.reps, splits)
			noLeaks(t, res)
		})
	}
}

// The ofi-rxm workload's known answers: each remote process reaches the
// node through one send QP (per remote node, not per rank), so the node
// hosts (nodes-1) x ranks target QPs, each created by the process the
// remote one connects to first (round-robin: nodes-1 each) and opened by
// every other; each process closes its handles and the last close
// destroys (unreg_last = QPs); nothing is left.
func TestOfiRxmKnownAnswer(t *testing.T) {
	tests := []struct {
		name         string
		nodes, procs int
		state        verbs.QPState
	}{
		{"3 processes, 5 nodes, reset", 5, 3, verbs.QPReset},
		{"2 processes, 9 nodes, rtr", 9, 2, verbs.QPRTR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t, "ofi-rxm", "sim", tt.procs, 1, 0)
			cfg.Nodes, cfg.Repetitions, cfg.QPState = tt.nodes, 3, tt.state
			cfg.StormDefaults()
			res := runOK(t, cfg)
			ranks, reps := int64(tt.procs), int64(cfg.Repetitions)
			qps := int64(tt.nodes-1) * ranks
			want := map[string]int64{"create": reps * qps, "reg": reps * qps * (ranks - 1),
				"unreg": reps * qps * (ranks - 1), "unreg_last": reps * qps}
			if tt.state != verbs.QPReset {
				want["modify"] = reps * qps // the creator's, before it sends the number
			}
			if got := counts(res); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("op counts %v, want %v", got, want)
			}
			for k, s := range res.Ops {
				if s.Errors != 0 {
					t.Errorf("%s: %d errors %v", k, s.Errors, s.ErrnoCounts)
				}
			}
			for _, w := range res.Workers {
				if c, r := w.Counts["create"], w.Counts["reg"]; c != int64(tt.nodes-1) || c+r != qps {
					t.Errorf("repetition %d, worker %d: %d creates, %d opens; want %d creates, every one of %d QPs held once",
						w.Repetition+1, w.Index, c, r, tt.nodes-1, qps)
				}
			}
			if st := res.Storm; st == nil || st.QPs != int(qps) || st.Rails != 1 || len(st.MakespanNS) != cfg.Repetitions {
				t.Fatalf("storm %+v", st)
			}
			noLeaks(t, res)
		})
	}
}

// UDCM's on-demand shape (storm.contacts): a remote process contacts only
// its share of the local ranks, so each QP is opened by the contacted
// ranks but its creator, and the others never touch it; with elected
// creators only the contacted ranks elect. 4 processes, 5 nodes, half
// contacted: 16 QPs, 16 registrations, 32 handles dropped, 16 destroying.
func TestStormOnDemandKnownAnswer(t *testing.T) {
	for _, creators := range []string{"round-robin", "elect"} {
		t.Run(creators, func(t *testing.T) {
			cfg := stormConfig(t, "  nodes: 5\n  arrival: burst\n  teardown: unreg\n  contacts: 0.5\n  creators: "+creators+"\n", 4, "")
			cfg.Repetitions = 3
			cfg.StormDefaults()
			res := runOK(t, cfg)
			want := map[string]int64{"create": 3 * 16, "reg": 3 * 16, "unreg": 3 * 16, "unreg_last": 3 * 16}
			if got := counts(res); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("op counts %v, want %v", got, want)
			}
			for _, w := range res.Workers {
				// Each process is contacted by half the remote processes: 8 of the 16 QPs.
				if held := w.Counts["create"] + w.Counts["reg"]; held != 8 {
					t.Errorf("repetition %d, worker %d holds %d QPs, want the 8 it was contacted for", w.Repetition+1, w.Index, held)
				}
			}
			if st := res.Storm; st == nil || st.QPs != 16 || st.Registrations != 16 {
				t.Fatalf("storm %+v", st)
			}
			noLeaks(t, res)
		})
	}
}
