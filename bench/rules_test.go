package bench

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// Every rule of a configuration fires, on a configuration that breaks it
// and no rule before it, with its one message; and every rule has such a
// case here, so a rule added without one fails.
func TestEveryRuleFires(t *testing.T) {
	get := func(name string) *workloads.Spec {
		spec, err := workloads.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return spec
	}
	storm := func(c *Config, nodes int) {
		c.Workload, c.Nodes = get("storm"), nodes
		c.StormDefaults()
	}
	gid := func(i int) *int { return &i }
	cases := map[string]func(c *Config){
		"--workload":           func(c *Config) { c.Workload = nil },
		"--provider":           func(c *Config) { c.Provider = "nosuch" },
		"--device, --provider": func(c *Config) { c.Device = "mlx5_0" },
		"--provider, --sim-cost, --sim-semantics, --sim-max-qp": func(c *Config) { c.Provider, c.SimMaxQPs = "null", 10 },
		"--sim-semantics":                    func(c *Config) { c.SimSemantics = "modern" },
		"--ib-port":                          func(c *Config) { c.IBPort = 256 },
		"--gid-index":                        func(c *Config) { c.GIDIndex = gid(256) },
		"--ib-port, --gid-index, --provider": func(c *Config) { c.IBPort = 1 },
		"--nodes":                            func(c *Config) { storm(c, 1) },
		"--nodes, --workload":                func(c *Config) { c.Nodes = 4 },
		"--procs":                            func(c *Config) { c.Procs = 0 },
		"--threads":                          func(c *Config) { c.Threads = MaxThreads + 1 },
		"--nodes, --procs, --threads":        func(c *Config) { storm(c, workloads.MaxStormNodes) },
		"--workload, --duration, --iterations, --warmup, --qps": func(c *Config) { storm(c, 9); c.Warmup = time.Second },
		"--qps": func(c *Config) { c.QPs = 0 },
		"--sim-semantics, --threads": func(c *Config) {
			c.Workload, c.SimSemantics, c.Threads = get("steady"), verbs.LegacyMlnx, 2
		},
		"--duration":                  func(c *Config) { c.Duration = -time.Second },
		"--iterations":                func(c *Config) { c.Iterations = -1 },
		"--warmup":                    func(c *Config) { c.Warmup = 2 * time.Hour },
		"--duration, --iterations":    func(c *Config) { c.Duration = time.Second },
		"--repetitions":               func(c *Config) { c.Repetitions = 1001 },
		"--interval":                  func(c *Config) { c.Interval = 0 },
		"--stall-timeout":             func(c *Config) { c.StallTimeout = -time.Second },
		"--stall-timeout, --interval": func(c *Config) { c.StallTimeout = time.Millisecond },
		"--out":                       func(c *Config) { c.Out = "" },
		"--batch-ops":                 func(c *Config) { c.BatchOps = 0 },
		"--batch-time":                func(c *Config) { c.BatchTime = 0 },
		"--rate":                      func(c *Config) { c.Rate = -1 },
		"--rate-total":                func(c *Config) { c.RateTotal = math.NaN() },
		"--rate, --rate-total":        func(c *Config) { c.Rate, c.RateTotal = 5, 5 },
		"--rate, --rate-total, --procs, --threads": func(c *Config) { c.Rate = 1e-11 },
		"--arrival":                          func(c *Config) { c.Arrival = "bursty" },
		"--arrival, --rate, --rate-total":    func(c *Config) { c.Arrival = ArrivalPoisson },
		"--rate, --rate-total, --iterations": func(c *Config) { c.Iterations, c.Rate = 1000, 1e-5 },
		"--rate, --rate-total, --duration, --warmup": func(c *Config) {
			c.Workload, c.Iterations, c.Duration, c.Rate = get("lifecycle"), 0, 300*time.Millisecond, 0.05
		},
		"--label":      func(c *Config) { c.Labels = map[string]string{"1fw": "x"} },
		"--pin":        func(c *Config) { c.Pin = "sometimes" },
		"--sim-max-qp": func(c *Config) { c.SimMaxQPs = MaxSimQPs + 1 },
		// sharded: per-thread QPs the coordinator's holder keeps.
		"--procs, --threads, --qps":                 func(c *Config) { c.Threads, c.QPs = MaxThreads, 65 },
		"--procs, --threads":                        func(c *Config) { c.Workload, c.Procs, c.Threads = get("steady"), 16, 8 },
		"--qps, --threads, --sim-max-qp":            func(c *Config) { c.SimMaxQPs = 2 },
		"--nodes, --procs, --threads, --sim-max-qp": func(c *Config) { c.Procs = 2; storm(c, 9); c.SimMaxQPs = 10 },
	}
	base := func() Config {
		c := Config{Provider: "sim", Workload: get("sharded"), Procs: 1, Threads: 1, QPs: 4, Iterations: 1,
			Repetitions: 1, Interval: time.Second, Out: "x"}
		c.defaults()
		return c
	}
	if c := base(); c.Validate() != nil {
		t.Fatalf("the base configuration: %v", c.Validate())
	}
	for _, r := range rules {
		t.Run(r.flags, func(t *testing.T) {
			mod, ok := cases[r.flags]
			if !ok {
				t.Fatalf("no case breaks the rule %q", r.flags)
			}
			c := base()
			mod(&c)
			got := c.broken()
			if got == nil || got.flags != r.flags {
				t.Fatalf("broken rule %v, want %q", got, r.flags)
			}
			err := c.Validate()
			if err == nil || err.Error() != r.msg(&c) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Validate() = %v, want the rule's one line %q", err, r.msg(&c))
			}
		})
	}
	for name := range cases {
		if !slices.ContainsFunc(rules, func(r rule) bool { return r.flags == name }) {
			t.Errorf("case %q names no rule", name)
		}
	}
}

// Each field a user sets has exactly one rule of its own, named by its
// flag; a rule between fields names each of its flags, and no two rules
// have one name.
func TestOneRulePerField(t *testing.T) {
	name := regexp.MustCompile(`^--[a-z-]+(, --[a-z-]+)*$`)
	seen := map[string]bool{}
	for _, r := range rules {
		if !name.MatchString(r.flags) {
			t.Errorf("rule %q: want its flags, --a, --b", r.flags)
		}
		if seen[r.flags] {
			t.Errorf("two rules named %q", r.flags)
		}
		seen[r.flags] = true
	}
	// The flags whose values are checked on their own; --device (any
	// name, the provider's to judge), --sim-cost and --qp-state (parsed
	// into what is always valid), --seed and --no-cpu-check take any.
	for _, flag := range []string{"--workload", "--provider", "--sim-semantics", "--ib-port", "--gid-index", "--nodes",
		"--procs", "--threads", "--qps", "--duration", "--iterations", "--warmup", "--repetitions", "--interval",
		"--stall-timeout", "--out", "--batch-ops", "--batch-time", "--rate", "--rate-total", "--arrival", "--label",
		"--pin", "--sim-max-qp"} {
		if !seen[flag] {
			t.Errorf("%s has no rule of its own", flag)
		}
	}
}
