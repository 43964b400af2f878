package workloads

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Storm mode replays how a parallel job wires XRC receive QPs on one
// node. With round-robin or random creators it is the historical MPI
// wiring (Open MPI 1.x's XOOB and UDCM, MVAPICH2's legacy path, neither
// used today; the README's "who uses XRC today"): every remote process has
// one XRC send QP per node and rail; its first contact with this node makes
// the contacted local rank create the receive QP, and each later contact
// with another local rank carries that QP's number and makes that rank
// register with it. With N nodes, P ranks per node and R rails a node
// hosts (N-1) x P x R receive QPs, each created once and registered P-1
// times. The local ranks are the run's worker threads (--procs x
// --threads); the remote ones exist only as the order of contact.
//
// With creators elect it is GASNet-EX's ibv-conduit (gasnet_core_connect.c,
// gasnetc_xrc_create_qp): every local process wires every remote rank x
// qpi itself, in the same order, and the processes elect each receive
// QP's creator by compare-and-swap on its slot in shared memory; the
// winner creates, the others open it once its number is there. The
// arithmetic is the same: (N-1) x P x qpi QPs, each created once, opened
// P-1 times; who creates which is the race's.
//
//	mode: storm
//	storm:
//	  nodes: 9              # nodes of the job, this one included (2 or more)
//	  rails: 1              # send QPs per remote process and node (1 to 16);
//	                        # qpi, GASNet's name for it, may be given instead
//	  arrival: burst        # burst: every contact at the storm's start;
//	                        # poisson: each connection's first contact drawn
//	                        # in the window (a Poisson process's arrivals)
//	  window: 10ms          # poisson only
//	  teardown: unreg       # unreg: every rank unregisters (MVAPICH's
//	                        # finalize); exit: the ranks exit holding them
//	  reconnect: 0.25       # share of connections torn down and re-wired
//	                        # mid-storm (0 to 1)
//	  contacts: 1           # share of the local ranks each remote process
//	                        # contacts (0 to 1, at least one): UDCM's
//	                        # on-demand wiring below 1; all by default
//	  creators: round-robin # who is contacted first: round-robin | random
//	                        # (random draws with the run's --seed) | elect
//	                        # (decided at run time by compare-and-swap)

// Storm is the storm block of a workload.
type Storm struct {
	Nodes     int     `yaml:"nodes"`
	Rails     int     `yaml:"rails"`
	QPI       int     `yaml:"qpi"` // Rails, in GASNet's words; parsing moves it there
	Arrival   string  `yaml:"arrival"`
	Window    string  `yaml:"window"`
	Teardown  string  `yaml:"teardown"`
	Reconnect float64 `yaml:"reconnect"`
	Creators  string  `yaml:"creators"`
	Contacts  float64 `yaml:"contacts"`

	// WindowDur is Window parsed.
	WindowDur time.Duration `yaml:"-"`
}

// Storm mode and its choices.
const (
	StormMode Mode = "storm"

	ArrivalBurst   = "burst"
	ArrivalPoisson = "poisson"

	TeardownUnreg = "unreg"
	TeardownExit  = "exit"

	CreatorsRoundRobin = "round-robin"
	CreatorsRandom     = "random"
	CreatorsElect      = "elect"
)

// Op kinds only a storm produces.
const (
	// OpRegRetry is a registration that found its QP destroyed (EINVAL):
	// the connection was torn down under it and the handshake restarts.
	OpRegRetry = "reg_retry"
	// OpRestart is the creation that restart makes: the rank whose
	// registration failed creates a receive QP of its own.
	OpRestart = "restart"
)

// Limits of a storm, to refuse what cannot be meant before planning it.
const (
	MaxStormNodes = 100000
	MaxStormRails = 16
	MaxStormQPs   = 1 << 20 // receive QPs planned on the node
	MaxWindow     = time.Hour
)

// stormKinds is the storm's op kinds in results order.
func (s *Spec) stormKinds() []string {
	out := []string{OpCreate, OpReg}
	if s.Storm.Teardown == TeardownUnreg || s.Storm.Reconnect > 0 {
		out = append(out, OpUnreg, OpUnregLast)
	}
	if s.Storm.Reconnect > 0 {
		out = append(out, OpRegRetry, OpRestart)
	}
	return out
}

// parseStorm checks a storm-mode spec; line finds a key's line.
func parseStorm(s *Spec, doc *yaml.Node, fail func(int, string, ...any) error, line func(...string) int) error {
	if n := find(doc, "qps"); n != nil {
		return fail(n.Line, "mode storm has no qps: the storm block says how many QPs a node hosts")
	}
	if n := find(doc, "phases"); n != nil {
		return fail(n.Line, "mode storm has no phases: each rank's actions come from the storm block")
	}
	st := s.Storm
	if st == nil {
		return fail(doc.Line, "mode storm needs a storm block (nodes, rails, arrival, teardown, reconnect, creators)")
	}
	if st.Nodes == 0 {
		return fail(line("storm"), "missing storm.nodes (the job's nodes, this one included)")
	}
	if st.Nodes < 2 || st.Nodes > MaxStormNodes {
		return fail(line("storm", "nodes"), "storm.nodes %d: want 2 to %d (the job's nodes, this one included)", st.Nodes, MaxStormNodes)
	}
	if st.QPI != 0 {
		if st.Rails != 0 {
			return fail(line("storm", "qpi"), "storm.qpi and storm.rails are one count (GASNet's qpi is the storm's rails): give one")
		}
		if st.QPI < 1 || st.QPI > MaxStormRails {
			return fail(line("storm", "qpi"), "storm.qpi %d: want 1 to %d", st.QPI, MaxStormRails)
		}
		st.Rails = st.QPI
	}
	if st.Rails == 0 {
		st.Rails = 1
	}
	if st.Rails < 1 || st.Rails > MaxStormRails {
		return fail(line("storm", "rails"), "storm.rails %d: want 1 to %d", st.Rails, MaxStormRails)
	}
	switch st.Arrival {
	case ArrivalBurst:
		if st.Window != "" {
			return fail(line("storm", "window"), "storm.window with arrival burst: every contact comes at the storm's start; use arrival poisson")
		}
	case ArrivalPoisson:
		if st.Window == "" {
			return fail(line("storm", "arrival"), "arrival poisson needs storm.window, e.g. 10ms")
		}
		d, err := time.ParseDuration(st.Window)
		if err != nil || d <= 0 || d > MaxWindow {
			return fail(line("storm", "window"), "storm.window %q: want a duration from 1us to %v, e.g. 10ms", st.Window, MaxWindow)
		}
		st.WindowDur = d
	case "":
		return fail(line("storm"), "missing storm.arrival (burst or poisson)")
	default:
		return fail(line("storm", "arrival"), "storm.arrival %q: want burst or poisson", st.Arrival)
	}
	switch st.Teardown {
	case TeardownUnreg, TeardownExit:
	case "":
		return fail(line("storm"), "missing storm.teardown (unreg or exit)")
	default:
		return fail(line("storm", "teardown"), "storm.teardown %q: want unreg or exit", st.Teardown)
	}
	if math.IsNaN(st.Reconnect) || st.Reconnect < 0 || st.Reconnect > 1 {
		return fail(line("storm", "reconnect"), "storm.reconnect %v: want a fraction from 0 to 1", st.Reconnect)
	}
	if math.IsNaN(st.Contacts) || st.Contacts < 0 || st.Contacts > 1 {
		return fail(line("storm", "contacts"), "storm.contacts %v: want the share of local ranks each remote process contacts, above 0 and at most 1", st.Contacts)
	}
	if find(find(doc, "storm"), "contacts") != nil && st.Contacts == 0 {
		return fail(line("storm", "contacts"), "storm.contacts 0: a remote process contacts at least one local rank; want above 0, at most 1")
	}
	if st.Contacts == 0 {
		st.Contacts = 1
	}
	switch st.Creators {
	case "":
		st.Creators = CreatorsRoundRobin
	case CreatorsRoundRobin, CreatorsRandom:
	case CreatorsElect:
		if st.Reconnect > 0 {
			// GASNet wires each connection once; a re-wire would need a
			// second election on a slot that already holds a number.
			return fail(line("storm", "reconnect"), "storm.reconnect %v with creators elect: an elected QP is wired once; want 0", st.Reconnect)
		}
	default:
		return fail(line("storm", "creators"), "storm.creators %q: want round-robin, random or elect", st.Creators)
	}
	return nil
}

// QPs is how many receive QPs the storm wires on the node: one per remote
// process and rail, (nodes-1) x ranks x rails.
func (st *Storm) QPs(nodes, ranks int) int { return (nodes - 1) * ranks * st.Rails }

// Contacted is how many local ranks each remote process contacts: the
// share contacts of ranks, rounded, at least one (the creator).
func (st *Storm) Contacted(ranks int) int {
	c := st.Contacts
	if c == 0 {
		c = 1 // a Storm not from Parse
	}
	return max(1, int(math.Round(c*float64(ranks))))
}

// Registrations is how many registrations those QPs take: one by each
// contacted rank but the creator, P-1 each when every rank is contacted.
func (st *Storm) Registrations(nodes, ranks int) int {
	return st.QPs(nodes, ranks) * (st.Contacted(ranks) - 1)
}

// Action is what a rank does in a storm.
type Action int8

const (
	// ActCreate: create the connection's receive QP and send its number
	// back (publish it for the other ranks).
	ActCreate Action = iota
	// ActRewire: the connection is torn down and re-wired: drop the
	// handle, create a new QP and publish its number instead.
	ActRewire
	// ActReg: register with the connection's QP, whose number a later
	// contact carries: it can run only once the creator published it.
	ActReg
	// ActElect: take part in the election of the connection's creator
	// (creators elect): create the QP if this rank's compare-and-swap
	// wins the slot, else register with the winner's.
	ActElect
)

func (a Action) String() string {
	return [...]string{"create", "rewire", "reg", "elect"}[a]
}

// Step is one action of one rank.
type Step struct {
	Act   Action
	Conn  int           // the connection (remote process and rail): its QP slot
	Start time.Duration // intended start, after the storm's start
}

// StormPlan is every rank's list of steps, in the order the rank serves
// them: by intended start, then creations before rewires before
// registrations (a number sent back early unblocks other ranks), then by
// connection.
type StormPlan struct {
	QPs     int      // connections, one receive QP each
	Creator []int    // per connection: the rank contacted first; -1: elected at run time
	Rewired []bool   // per connection: torn down and re-wired mid-storm
	Ranks   [][]Step // per rank
}

// Plan gives each of ranks local ranks its steps for a storm of nodes
// nodes, as the remote senders' order of contact would: each connection
// is created by one rank (round-robin over the connections, or drawn with
// seed) and registered by every other rank.
func (st *Storm) Plan(nodes, ranks int, seed int64) *StormPlan {
	n := st.QPs(nodes, ranks)
	p := &StormPlan{QPs: n, Creator: make([]int, n), Rewired: make([]bool, n), Ranks: make([][]Step, ranks)}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5707))
	starts := make([]time.Duration, n)
	for c := 0; c < n; c++ {
		if st.Creators == CreatorsRandom {
			p.Creator[c] = rng.IntN(ranks)
		} else {
			p.Creator[c] = c % ranks
		}
		if st.Arrival == ArrivalPoisson {
			// Given how many arrivals a Poisson process has in a window,
			// their times are independent and uniform in it.
			starts[c] = time.Duration(rng.Int64N(int64(st.WindowDur)))
		}
	}
	for _, c := range rng.Perm(n)[:int(math.Round(st.Reconnect*float64(n)))] {
		p.Rewired[c] = true
	}
	// A remote process contacts k local ranks: its first and the k-1
	// after it (mod ranks), so every rank gets an even share. Open MPI's
	// UDCM wires on demand: a rank the remote process never sends to
	// never opens the QP.
	k := st.Contacted(ranks)
	for c := 0; c < n; c++ {
		if st.Creators == CreatorsElect {
			// Every contacted rank wires the connection, in the same
			// order (GASNet's loop over remote nodes and qpi): the ranks
			// meet on each slot, and the race decides.
			p.Creator[c] = -1
			for j := 0; j < k; j++ {
				r := (c + j) % ranks
				p.Ranks[r] = append(p.Ranks[r], Step{Act: ActElect, Conn: c, Start: starts[c]})
			}
			continue
		}
		cr := p.Creator[c]
		p.Ranks[cr] = append(p.Ranks[cr], Step{Act: ActCreate, Conn: c, Start: starts[c]})
		if p.Rewired[c] {
			p.Ranks[cr] = append(p.Ranks[cr], Step{Act: ActRewire, Conn: c, Start: starts[c]})
		}
		for j := 1; j < k; j++ {
			r := (cr + j) % ranks
			p.Ranks[r] = append(p.Ranks[r], Step{Act: ActReg, Conn: c, Start: starts[c]})
		}
	}
	for _, steps := range p.Ranks {
		slices.SortStableFunc(steps, func(a, b Step) int {
			if a.Start != b.Start {
				return cmpInt(int64(a.Start), int64(b.Start))
			}
			if a.Act != b.Act {
				return int(a.Act) - int(b.Act)
			}
			return a.Conn - b.Conn
		})
	}
	return p
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Describe is the storm in one line, for messages and reports.
func (st *Storm) Describe(nodes, ranks int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d nodes x %d ranks x %d rail(s): %d receive QPs, %d registrations; arrival %s",
		nodes, ranks, st.Rails, st.QPs(nodes, ranks), st.Registrations(nodes, ranks), st.Arrival)
	if st.Arrival == ArrivalPoisson {
		fmt.Fprintf(&b, " in %v", st.WindowDur)
	}
	fmt.Fprintf(&b, ", teardown %s, reconnect %g, creators %s", st.Teardown, st.Reconnect, st.Creators)
	if k := st.Contacted(ranks); k < ranks {
		fmt.Fprintf(&b, ", %d of %d ranks contacted", k, ranks)
	}
	return b.String()
}
