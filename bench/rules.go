package bench

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// A rule is one check of a configuration, the only one of its field: the
// flag it is about (a rule between flags names them all, "--rate,
// --rate-total"), when a configuration breaks it, and the one message
// that says so, worded as run's flags name things. Every description of a
// run meets the same rules: run's and sweep's flags and a qualification's
// steps through Settings.Config, and Run itself.
type rule struct {
	flags string
	bad   func(c *Config) bool
	msg   func(c *Config) string
}

// Validate checks the configuration against rules, in order, and says
// the first one broken; its errors are bad input. A zero BatchOps or
// BatchTime is refused here, as the flags refuse it; Run fills in the
// engine's defaults before it validates (Config.defaults).
func (c *Config) Validate() error {
	if r := c.broken(); r != nil {
		return errors.New(r.msg(c))
	}
	return nil
}

// broken is the first rule c breaks, or nil.
func (c *Config) broken() *rule {
	for i := range rules {
		if rules[i].bad(c) {
			return &rules[i]
		}
	}
	return nil
}

// rules are the checks of a configuration, in the order they are asked:
// a rule may rely on the ones before it (the workload is there, --procs
// and --threads are in range, the duration or the iterations count).
var rules = []rule{
	{"--workload", func(c *Config) bool { return c.Workload == nil },
		func(*Config) string { return "no workload" }},
	{"--provider", func(c *Config) bool { return !verbs.IsProvider(c.Provider) },
		func(c *Config) string {
			return fmt.Sprintf("unknown provider %q: want one of %s", c.Provider, ProviderNames())
		}},
	{"--device, --provider", func(c *Config) bool {
		// Accepted, a name the sim lacks would be recorded as the device measured.
		return c.Device != "" && (c.Provider == "sim" && c.Device != verbs.SimDeviceName || c.Provider == "null")
	}, func(c *Config) string {
		has := "the null provider has no device"
		if c.Provider == "sim" {
			has = "the sim provider's one device is " + verbs.SimDeviceName
		}
		return fmt.Sprintf("--device %q: %s", c.Device, has)
	}},
	{"--provider, --sim-cost, --sim-semantics, --sim-max-qp", func(c *Config) bool {
		return c.Provider != "sim" && (c.SimCost != verbs.Cost{} || c.semantics() != verbs.Legacy || c.SimMaxQPs != 0)
	}, func(*Config) string {
		return "--sim-cost, --sim-semantics and --sim-max-qp apply to --provider sim only"
	}},
	{"--sim-semantics", func(c *Config) bool {
		_, err := verbs.ParseSemantics(string(c.semantics()))
		return err != nil
	}, func(c *Config) string {
		_, err := verbs.ParseSemantics(string(c.semantics()))
		return "--sim-semantics: " + err.Error()
	}},
	{"--ib-port", func(c *Config) bool { return c.IBPort < 0 || c.IBPort > 255 },
		func(c *Config) string {
			return fmt.Sprintf("--ib-port %d: want a port number, 1 to 255 (0: the first ACTIVE port)", c.IBPort)
		}},
	{"--gid-index", func(c *Config) bool { return c.GIDIndex != nil && (*c.GIDIndex < 0 || *c.GIDIndex > 255) },
		func(c *Config) string {
			return fmt.Sprintf("--gid-index %d: want a GID table index, 0 to 255 (-1: automatic)", *c.GIDIndex)
		}},
	{"--ib-port, --gid-index, --provider", func(c *Config) bool {
		return (c.IBPort != 0 || c.GIDIndex != nil) && c.Provider != "rdma" && c.Provider != "legacy"
	}, func(*Config) string { return "--ib-port and --gid-index apply to --provider rdma and legacy only" }},
	{"--nodes", func(c *Config) bool {
		return c.storm() && (c.StormNodes() < 2 || c.StormNodes() > workloads.MaxStormNodes)
	}, func(c *Config) string {
		return fmt.Sprintf("--nodes %d: want 2 to %d (the job's nodes, this one included)", c.StormNodes(), workloads.MaxStormNodes)
	}},
	{"--nodes, --workload", func(c *Config) bool { return !c.storm() && c.Nodes != 0 },
		func(c *Config) string {
			return fmt.Sprintf("--nodes applies to storm workloads only, not to %s", c.Workload.Name)
		}},
	{"--procs", func(c *Config) bool { return c.Procs <= 0 || c.Procs > MaxProcs },
		func(c *Config) string { return fmt.Sprintf("--procs %d: want 1 to %d", c.Procs, MaxProcs) }},
	{"--threads", func(c *Config) bool { return c.Threads <= 0 || c.Threads > MaxThreads },
		func(c *Config) string { return fmt.Sprintf("--threads %d: want 1 to %d", c.Threads, MaxThreads) }},
	// A storm too big to plan, before --qps would be blamed for it.
	{"--nodes, --procs, --threads", func(c *Config) bool { return c.storm() && c.stormReceiveQPs() > MaxQPs },
		func(c *Config) string {
			return fmt.Sprintf("storm of %d nodes x %d ranks x %d rail(s): %d receive QPs on the node, at most %d",
				c.StormNodes(), c.Procs*c.Threads, c.Workload.Storm.Rails, c.stormReceiveQPs(), MaxQPs)
		}},
	// A storm's measured time and QPs are its own (StormDefaults).
	{"--workload, --duration, --iterations, --warmup, --qps", func(c *Config) bool {
		return c.storm() && (c.Iterations != 1 || c.Duration != 0 || c.Warmup != 0 || c.QPs != c.Workload.Storm.QPs(c.StormNodes(), c.Procs*c.Threads))
	}, func(*Config) string {
		return "a storm runs once per repetition: no --duration, --iterations, --warmup or --qps"
	}},
	{"--qps", func(c *Config) bool { return c.QPs <= 0 || c.QPs > MaxQPs },
		func(c *Config) string { return fmt.Sprintf("--qps %d: want 1 to %d", c.QPs, MaxQPs) }},
	// As preflight refuses it on the real library: one registrant per
	// process, so the threads of one would share its registrations.
	{"--sim-semantics, --threads", func(c *Config) bool {
		return c.Provider == "sim" && c.SimSemantics == verbs.LegacyMlnx && c.Threads > 1 && threadsShareQPs(c.Workload)
	}, func(c *Config) string {
		return fmt.Sprintf("--sim-semantics legacy-mlnx: a process is one registrant, so the %d threads of a process would share one "+
			"registration of each QP %s shares; run one thread per process: --threads 1 --procs %d", c.Threads, c.Workload.Name, c.Procs*c.Threads)
	}},
	{"--duration", func(c *Config) bool { return c.Duration < 0 || c.Duration > MaxDuration },
		func(c *Config) string {
			return fmt.Sprintf("--duration %v: want a positive duration up to %v (%d days) per repetition", c.Duration, MaxDuration, MaxDuration/(24*time.Hour))
		}},
	{"--iterations", func(c *Config) bool { return c.Iterations < 0 },
		func(c *Config) string { return fmt.Sprintf("--iterations %d: want a positive number", c.Iterations) }},
	{"--warmup", func(c *Config) bool { return c.Warmup < 0 || c.Warmup > MaxWarmup },
		func(c *Config) string { return fmt.Sprintf("--warmup %v: want 0 (none) up to %v", c.Warmup, MaxWarmup) }},
	{"--duration, --iterations", func(c *Config) bool { return (c.Duration > 0) == (c.Iterations > 0) },
		func(c *Config) string {
			return fmt.Sprintf("--duration %v, --iterations %d: want exactly one of them positive (a time such as 10s, or passes or rounds)", c.Duration, c.Iterations)
		}},
	{"--repetitions", func(c *Config) bool { return c.Repetitions <= 0 || c.Repetitions > 1000 },
		func(c *Config) string { return fmt.Sprintf("--repetitions %d: want 1 to 1000", c.Repetitions) }},
	{"--interval", func(c *Config) bool { return c.Interval < MinInterval || c.Interval > MaxInterval },
		func(c *Config) string {
			return fmt.Sprintf("--interval %v: want %v to %v", c.Interval, MinInterval, MaxInterval)
		}},
	{"--stall-timeout", func(c *Config) bool { return c.StallTimeout < 0 || c.StallTimeout > MaxStallTimeout },
		func(c *Config) string {
			return fmt.Sprintf("--stall-timeout %v: want 0 (the default) up to %v", c.StallTimeout, MaxStallTimeout)
		}},
	{"--stall-timeout, --interval", func(c *Config) bool {
		return c.StallTimeout > 0 && c.StallTimeout < heartbeat(c.Interval)*2
	}, func(c *Config) string {
		return fmt.Sprintf("--stall-timeout %v: want at least %v, two heartbeats of a worker (one per --interval, at most 1s)", c.StallTimeout, heartbeat(c.Interval)*2)
	}},
	{"--out", func(c *Config) bool { return c.Out == "" },
		func(*Config) string { return "no output folder" }},
	{"--batch-ops", func(c *Config) bool { return c.BatchOps <= 0 || c.BatchOps > MaxBatchOps },
		func(c *Config) string { return fmt.Sprintf("--batch-ops %d: want 1 to %d", c.BatchOps, MaxBatchOps) }},
	{"--batch-time", func(c *Config) bool { return c.BatchTime <= 0 || c.BatchTime > time.Second },
		func(c *Config) string {
			return fmt.Sprintf("--batch-time %v: want a positive duration such as 1ms, up to 1s", c.BatchTime)
		}},
	{"--rate", func(c *Config) bool { return !(c.Rate >= 0 && c.Rate <= MaxRate) }, // NaN too
		func(c *Config) string {
			return fmt.Sprintf("--rate %g: want a positive rate up to %g operations per second (0: a closed loop)", c.Rate, float64(MaxRate))
		}},
	{"--rate-total", func(c *Config) bool { return !(c.RateTotal >= 0 && c.RateTotal <= MaxRate) },
		func(c *Config) string {
			return fmt.Sprintf("--rate-total %g: want a positive rate up to %g operations per second (0: a closed loop)", c.RateTotal, float64(MaxRate))
		}},
	{"--rate, --rate-total", func(c *Config) bool { return c.Rate > 0 && c.RateTotal > 0 },
		func(*Config) string { return "give --rate or --rate-total, not both" }},
	// The least open-loop rate: a gap longer than the longest run is
	// never reached, and a far longer one wrapped in the schedule's
	// integer arithmetic and ran as a closed loop.
	{"--rate, --rate-total, --procs, --threads", func(c *Config) bool { return c.threadRate() > 0 && c.threadRate() < MinRate },
		func(c *Config) string {
			return fmt.Sprintf("%s: at most one arrival per thread every %d days (the longest run): want %s",
				c.rateFlag(), MaxDuration/(24*time.Hour), c.atLeast(MinRate))
		}},
	{"--arrival", func(c *Config) bool {
		return c.Arrival != "" && c.Arrival != ArrivalFixed && c.Arrival != ArrivalPoisson
	}, func(c *Config) string {
		return fmt.Sprintf("--arrival %q: want %s or %s", c.Arrival, ArrivalFixed, ArrivalPoisson)
	}},
	{"--arrival, --rate, --rate-total", func(c *Config) bool { return c.Arrival != "" && c.threadRate() == 0 },
		func(*Config) string { return "--arrival needs --rate or --rate-total" }},
	// What must run to its end cannot be cut there (slowrate.go).
	{"--rate, --rate-total, --iterations", func(c *Config) bool {
		return !c.storm() && c.threadRate() > 0 && c.Iterations > 0 && c.iterationsTime() > MaxDuration.Seconds()
	}, func(c *Config) string {
		return fmt.Sprintf("%s: %d iterations of at least one arrival each take %.3g s or more, beyond the longest run (%d days): want %s",
			c.rateFlag(), c.Iterations, c.iterationsTime(), MaxDuration/(24*time.Hour), c.atLeast(float64(c.Iterations)/MaxDuration.Seconds()))
	}},
	{"--rate, --rate-total, --duration, --warmup", func(c *Config) bool { return c.roundPastEnd() != "" },
		func(c *Config) string {
			flag, d := c.roundPastEnd(), c.Duration
			if flag == "--warmup" {
				d = c.Warmup
			}
			return fmt.Sprintf("%s: the first arrival after the start is %.3g s in, past the end of %s %v, and the rounds workload %s runs each round to its end: want %s",
				c.rateFlag(), 1/c.threadRate(), flag, d, c.Workload.Name, c.atLeast(1/d.Seconds()))
		}},
	{"--label", func(c *Config) bool { return results.ValidateLabels(c.Labels) != nil },
		func(c *Config) string { return "--label: " + results.ValidateLabels(c.Labels).Error() }},
	{"--pin", func(c *Config) bool {
		p, err := host.ParsePlacement(string(c.Pin))
		return err != nil || p != c.placement()
	}, func(c *Config) string { return fmt.Sprintf("--pin %q: want auto, cpu or none", c.Pin) }},
	{"--sim-max-qp", func(c *Config) bool { return c.SimMaxQPs < 0 || c.SimMaxQPs > MaxSimQPs },
		func(c *Config) string {
			return fmt.Sprintf("--sim-max-qp %d: want 1 to %d (0: the default %d)", c.SimMaxQPs, MaxSimQPs, verbs.DefaultSimMaxQPs)
		}},
	// What the device can hold: checked for the sim, whose limits are
	// known; a real device refuses at run time, with its errno.
	{"--procs, --threads, --qps", func(c *Config) bool {
		q := c.Workload.QPs
		return !c.storm() && q.Holder && q.Scope == workloads.PerThread && c.Procs*c.Threads*c.QPs > MaxQPs
	}, func(c *Config) string {
		return fmt.Sprintf("%d threads x %d QPs each: at most %d held QPs", c.Procs*c.Threads, c.QPs, MaxQPs)
	}},
	{"--procs, --threads", func(c *Config) bool { n, _ := c.simRegistrants(); return n > verbs.DefaultSimMaxRegs },
		func(c *Config) string {
			n, who := c.simRegistrants()
			return fmt.Sprintf("--procs %d x --threads %d: %d registrants per QP (%s), %d more than the sim device's %d: lower --procs or --threads",
				c.Procs, c.Threads, n, who, n-verbs.DefaultSimMaxRegs, verbs.DefaultSimMaxRegs)
		}},
	{"--qps, --threads, --sim-max-qp", func(c *Config) bool {
		return c.Provider == "sim" && !c.storm() && c.simLiveQPs() > c.simMaxQPs()
	}, func(c *Config) string {
		return fmt.Sprintf("%d QPs alive at once (--qps %d, %d threads): the sim device holds %d (--sim-max-qp)",
			c.simLiveQPs(), c.QPs, c.Procs*c.Threads, c.simMaxQPs())
	}},
	// At worst, each re-wired connection keeps its first QP alive (a rank
	// registered before the teardown), gets a new one, and every other
	// rank loses the race and creates its own.
	{"--nodes, --procs, --threads, --sim-max-qp", func(c *Config) bool {
		return c.Provider == "sim" && c.storm() && c.stormLiveQPs() > c.simMaxQPs()
	}, func(c *Config) string {
		st, ranks := c.Workload.Storm, c.Procs*c.Threads
		qps := st.QPs(c.StormNodes(), ranks)
		return fmt.Sprintf("storm of %d nodes x %d ranks x %d rail(s) needs up to %d live QPs (%d receive QPs + %d re-wired x %d ranks), the sim device holds %d: raise --sim-max-qp or lower --nodes",
			c.StormNodes(), ranks, st.Rails, c.stormLiveQPs(), qps, c.stormRewired(), ranks, c.simMaxQPs())
	}},
}

// ProviderNames lists the providers xrcbench knows, for messages.
func ProviderNames() string {
	var names []string
	for _, p := range verbs.Providers() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

func (c *Config) storm() bool { return c.Workload.Mode == workloads.StormMode }

// stormReceiveQPs is a storm's receive QPs on this node, in 64 bits: the
// rule that bounds it is asked before any that could overflow an int.
func (c *Config) stormReceiveQPs() int64 {
	return int64(c.StormNodes()-1) * int64(c.Procs*c.Threads) * int64(c.Workload.Storm.Rails)
}

func (c *Config) stormRewired() int {
	st := c.Workload.Storm
	return int(math.Round(st.Reconnect * float64(st.QPs(c.StormNodes(), c.Procs*c.Threads))))
}

func (c *Config) stormLiveQPs() int {
	ranks := c.Procs * c.Threads
	return c.Workload.Storm.QPs(c.StormNodes(), ranks) + c.stormRewired()*ranks
}

// simRegistrants is how many registrants each QP of a run on the sim has
// (0 where they are not bounded) and who they are: every thread registers
// with each shared QP, the coordinator's holder too when the workload has
// one; a storm's every rank with each QP.
func (c *Config) simRegistrants() (int, string) {
	total := c.Procs * c.Threads
	switch {
	case c.Provider != "sim":
		return 0, ""
	case c.storm():
		return total, fmt.Sprintf("storm of %d ranks, each takes a handle of every QP", total)
	case c.Workload.QPs.Scope != workloads.Shared:
		return 0, ""
	case c.Workload.QPs.Holder:
		return total + 1, fmt.Sprintf("%d threads and the coordinator's holder", total)
	}
	return total, fmt.Sprintf("%d threads", total)
}

// simLiveQPs is the QPs alive at once in a loop or rounds run: the
// workload's own, plus the foreign ones.
func (c *Config) simLiveQPs() int {
	live := c.QPs
	if c.Workload.QPs.Scope == workloads.PerThread {
		live = c.Procs * c.Threads * c.QPs
	}
	if c.Workload.Uses(workloads.OpRegForeign) {
		live += c.QPs
	}
	return live
}
