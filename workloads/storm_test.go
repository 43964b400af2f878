package workloads

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const stormHead = "name: x\ndescription: d\nmode: storm\n"

func TestStormParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line int
		msg  string
	}{
		{"no block", stormHead, 1, "needs a storm block"},
		{"phases", stormHead + "storm: {nodes: 2, arrival: burst, teardown: unreg}\nphases: [{op: reg, by: each}]\n", 5, "mode storm has no phases"},
		{"qps", stormHead + "qps: {scope: shared}\nstorm: {nodes: 2, arrival: burst, teardown: unreg}\n", 4, "mode storm has no qps"},
		{"unknown key", stormHead + "storm:\n  nodes: 2\n  arrivals: burst\n", 6, "unknown key arrivals; did you mean arrival?"},
		{"missing nodes", stormHead + "storm:\n  arrival: burst\n  teardown: unreg\n", 5, "missing storm.nodes"},
		{"one node", stormHead + "storm:\n  nodes: 1\n  arrival: burst\n  teardown: unreg\n", 5, "storm.nodes 1: want 2 to"},
		{"nodes not a number", stormHead + "storm:\n  nodes: many\n", 5, "cannot unmarshal"},
		{"rails", stormHead + "storm:\n  nodes: 4\n  rails: 17\n  arrival: burst\n  teardown: unreg\n", 6, "storm.rails 17"},
		{"missing arrival", stormHead + "storm:\n  nodes: 4\n  teardown: unreg\n", 5, "missing storm.arrival"},
		{"bad arrival", stormHead + "storm:\n  nodes: 4\n  arrival: lazy\n  teardown: unreg\n", 6, `storm.arrival "lazy"`},
		{"burst with window", stormHead + "storm:\n  nodes: 4\n  arrival: burst\n  window: 1ms\n  teardown: unreg\n", 7, "storm.window with arrival burst"},
		{"poisson without window", stormHead + "storm:\n  nodes: 4\n  arrival: poisson\n  teardown: unreg\n", 6, "needs storm.window"},
		{"bad window", stormHead + "storm:\n  nodes: 4\n  arrival: poisson\n  window: soon\n  teardown: unreg\n", 7, `storm.window "soon"`},
		{"negative window", stormHead + "storm:\n  nodes: 4\n  arrival: poisson\n  window: -1ms\n  teardown: unreg\n", 7, `storm.window "-1ms"`},
		{"missing teardown", stormHead + "storm:\n  nodes: 4\n  arrival: burst\n", 5, "missing storm.teardown"},
		{"bad teardown", stormHead + "storm:\n  nodes: 4\n  arrival: burst\n  teardown: crash\n", 7, `storm.teardown "crash"`},
		{"reconnect above 1", stormHead + "storm:\n  nodes: 4\n  arrival: burst\n  teardown: exit\n  reconnect: 1.5\n", 8, "storm.reconnect 1.5"},
		{"reconnect negative", stormHead + "storm:\n  nodes: 4\n  arrival: burst\n  teardown: exit\n  reconnect: -0.1\n", 8, "storm.reconnect -0.1"},
		{"bad creators", stormHead + "storm:\n  nodes: 4\n  arrival: burst\n  teardown: exit\n  creators: first\n", 8, `storm.creators "first"`},
		{"qpi and rails", stormHead + "storm:\n  nodes: 4\n  rails: 1\n  qpi: 2\n  arrival: burst\n  teardown: exit\n", 7, "storm.qpi and storm.rails are one count"},
		{"qpi too many", stormHead + "storm:\n  nodes: 4\n  qpi: 17\n  arrival: burst\n  teardown: exit\n", 6, "storm.qpi 17: want 1 to 16"},
		{"contacts above 1", stormHead + "storm:\n  nodes: 4\n  arrival: burst\n  teardown: exit\n  contacts: 1.5\n", 8, "storm.contacts 1.5"},
		{"contacts zero", stormHead + "storm:\n  nodes: 4\n  arrival: burst\n  teardown: exit\n  contacts: 0\n", 8, "storm.contacts 0: a remote process contacts at least one"},
		{"elect with reconnect", stormHead + "storm:\n  nodes: 4\n  arrival: burst\n  teardown: exit\n  reconnect: 0.5\n  creators: elect\n", 8, "storm.reconnect 0.5 with creators elect"},
		{"storm block in loop", head + "mode: loop\nqps: {scope: shared, holder: true}\nstorm: {nodes: 2}\nphases: [{op: reg, by: each}, {op: unreg, by: each}]\n", 5, "needs mode storm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "w.yaml")
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SyntaxError", err)
			}
			if se.Line != tt.line || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("got line %d %q, want line %d containing %q", se.Line, se.Msg, tt.line, tt.msg)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("message %q: want one line", err.Error())
			}
		})
	}
}

func TestStormParseDefaults(t *testing.T) {
	s, err := Parse([]byte(stormHead+"storm:\n  nodes: 3\n  arrival: poisson\n  window: 2ms\n  teardown: exit\n  reconnect: 0.25\n"), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st := s.Storm
	if st.Rails != 1 || st.Creators != CreatorsRoundRobin || st.WindowDur != 2*time.Millisecond || st.Contacts != 1 {
		t.Errorf("defaults: rails %d, creators %q, window %v", st.Rails, st.Creators, st.WindowDur)
	}
	want := []string{OpCreate, OpReg, OpUnreg, OpUnregLast, OpRegRetry, OpRestart}
	if strings.Join(s.Kinds(), ",") != strings.Join(want, ",") {
		t.Errorf("kinds %v, want %v (reconnect unregisters even with teardown exit)", s.Kinds(), want)
	}
	if !s.Creates() {
		t.Error("a storm creates QPs")
	}
}

// TestStormPlan: the plan is the arithmetic: (N-1) x P x R QPs,
// each created by exactly one rank and registered by each other rank.
func TestStormPlan(t *testing.T) {
	tests := []struct {
		name                string
		storm               Storm
		nodes, ranks        int
		qps                 int
		creates, regs       []int // per rank
		rewired             int
		wantStartsInsideWin bool
	}{
		{"issue's 2 ranks x 9 nodes", Storm{Rails: 1, Arrival: ArrivalBurst, Creators: CreatorsRoundRobin}, 9, 2, 16, []int{8, 8}, []int{8, 8}, 0, false},
		{"3 ranks, 2 rails", Storm{Rails: 2, Arrival: ArrivalBurst, Creators: CreatorsRoundRobin}, 4, 3, 18, []int{6, 6, 6}, []int{12, 12, 12}, 0, false},
		{"reconnect a quarter", Storm{Rails: 1, Arrival: ArrivalBurst, Creators: CreatorsRoundRobin, Reconnect: 0.25}, 9, 2, 16, []int{8, 8}, []int{8, 8}, 4, false},
		{"one rank", Storm{Rails: 1, Arrival: ArrivalBurst, Creators: CreatorsRoundRobin}, 5, 1, 4, []int{4}, []int{0}, 0, false},
		{"poisson", Storm{Rails: 1, Arrival: ArrivalPoisson, WindowDur: time.Millisecond, Creators: CreatorsRoundRobin}, 9, 2, 16, []int{8, 8}, []int{8, 8}, 0, true},
		// Elected: every rank meets every connection; the run decides.
		{"elect, 3 ranks, qpi 2", Storm{Rails: 2, Arrival: ArrivalBurst, Creators: CreatorsElect}, 4, 3, 18, []int{0, 0, 0}, []int{0, 0, 0}, 0, false},
		// UDCM on demand: each remote process contacts 2 of 4 ranks, its
		// first and the next; 12 QPs, each registered once.
		{"half contacted", Storm{Rails: 1, Arrival: ArrivalBurst, Creators: CreatorsRoundRobin, Contacts: 0.5}, 4, 4, 12, []int{3, 3, 3, 3}, []int{3, 3, 3, 3}, 0, false},
		{"elect, 1 of 3 contacted", Storm{Rails: 1, Arrival: ArrivalBurst, Creators: CreatorsElect, Contacts: 0.2}, 3, 3, 6, []int{0, 0, 0}, []int{0, 0, 0}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.storm.Plan(tt.nodes, tt.ranks, 1)
			if p.QPs != tt.qps || tt.storm.QPs(tt.nodes, tt.ranks) != tt.qps {
				t.Fatalf("QPs %d, want %d", p.QPs, tt.qps)
			}
			created, registered, elected, rewired := map[int]int{}, map[int]int{}, map[int]int{}, 0
			for r, steps := range p.Ranks {
				nc, nr := 0, 0
				for i, s := range steps {
					switch s.Act {
					case ActCreate:
						nc++
						created[s.Conn]++
						if p.Creator[s.Conn] != r {
							t.Errorf("rank %d creates QP %d of creator %d", r, s.Conn, p.Creator[s.Conn])
						}
					case ActReg:
						nr++
						registered[s.Conn]++
					case ActRewire:
						rewired++
					case ActElect:
						elected[s.Conn]++
						if p.Creator[s.Conn] != -1 {
							t.Errorf("QP %d elected, yet planned for creator %d", s.Conn, p.Creator[s.Conn])
						}
					}
					if tt.wantStartsInsideWin && (s.Start < 0 || s.Start >= tt.storm.WindowDur) {
						t.Errorf("start %v outside the window", s.Start)
					}
					if !tt.wantStartsInsideWin && s.Start != 0 {
						t.Errorf("burst start %v", s.Start)
					}
					if i > 0 && steps[i-1].Start > s.Start {
						t.Errorf("rank %d: steps not in order of intended start", r)
					}
				}
				if nc != tt.creates[r] || nr != tt.regs[r] {
					t.Errorf("rank %d: %d creates, %d regs; want %d, %d", r, nc, nr, tt.creates[r], tt.regs[r])
				}
			}
			k := tt.storm.Contacted(tt.ranks)
			if tt.storm.Registrations(tt.nodes, tt.ranks) != tt.qps*(k-1) {
				t.Errorf("registrations %d, want %d QPs x %d", tt.storm.Registrations(tt.nodes, tt.ranks), tt.qps, k-1)
			}
			for c := 0; c < p.QPs; c++ {
				if tt.storm.Creators == CreatorsElect {
					if elected[c] != k || created[c]+registered[c] != 0 {
						t.Errorf("QP %d: %d ranks elect, %d create, %d register; want the %d contacted ranks to elect", c, elected[c], created[c], registered[c], k)
					}
					continue
				}
				if created[c] != 1 || registered[c] != k-1 {
					t.Errorf("QP %d: created %d times, registered %d times", c, created[c], registered[c])
				}
			}
			if rewired != tt.rewired {
				t.Errorf("%d rewired, want %d", rewired, tt.rewired)
			}
		})
	}
}

// Random creators follow the seed: the same seed gives the same plan, and
// over many QPs every rank gets a share.
func TestStormPlanRandomCreators(t *testing.T) {
	st := Storm{Rails: 1, Arrival: ArrivalBurst, Creators: CreatorsRandom}
	a, b, c := st.Plan(101, 4, 7), st.Plan(101, 4, 7), st.Plan(101, 4, 8)
	same, differ := true, false
	counts := make([]int, 4)
	for q := range a.Creator {
		same = same && a.Creator[q] == b.Creator[q]
		differ = differ || a.Creator[q] != c.Creator[q]
		counts[a.Creator[q]]++
	}
	if !same || !differ {
		t.Errorf("same seed same plan: %v; other seed other plan: %v", same, differ)
	}
	for r, n := range counts {
		if n < 50 || n > 150 { // 400 QPs over 4 ranks: 100 each expected
			t.Errorf("rank %d creates %d of 400 QPs", r, n)
		}
	}
}
