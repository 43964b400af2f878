package bench

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/xrcbench/xrcbench/workloads"
)

// An open loop too slow for the work asked of it is refused (the rules
// named "--rate, --rate-total, --iterations" and "..., --duration,
// --warmup"). A loop workload timed by --duration (and its warm-up) needs
// no floor: its threads do not wait for an arrival due after the end, so
// the run ends on time whatever the rate. What must run to its end cannot
// be cut there: --iterations (every pass or round, each at least one
// operation per thread, so at least Iterations arrivals) must fit in
// MaxDuration, and a round in flight at the end of --duration or
// --warmup finishes, so the first arrival after the start must fall
// within them.

// iterationsTime is the least time --iterations take at the open loop's
// rate, in seconds: one arrival per pass or round.
func (c *Config) iterationsTime() float64 {
	return float64(c.Iterations) / c.threadRate()
}

// roundPastEnd names the time, --duration or --warmup, that ends before
// the first arrival after the start in a rounds workload's open loop, or
// is "" when none does.
func (c *Config) roundPastEnd() string {
	rate := c.threadRate()
	if rate <= 0 || c.Iterations > 0 || c.Workload.Mode != workloads.Rounds {
		return ""
	}
	for _, t := range []struct {
		flag string
		d    time.Duration
	}{{"--duration", c.Duration}, {"--warmup", c.Warmup}} {
		if t.d > 0 && 1/rate > t.d.Seconds() {
			return t.flag
		}
	}
	return ""
}

// rateFlag names the rate as given.
func (c *Config) rateFlag() string {
	if c.RateTotal > 0 {
		return fmt.Sprintf("--rate-total %g (%d threads)", c.RateTotal, c.Procs*c.Threads)
	}
	return fmt.Sprintf("--rate %g", c.Rate)
}

// atLeast is the smallest rate per thread, in the flag the user gave.
func (c *Config) atLeast(perThread float64) string {
	if c.RateTotal > 0 {
		return "--rate-total at least " + roundUp3(perThread*float64(c.Procs*c.Threads))
	}
	return "--rate at least " + roundUp3(perThread)
}

// roundUp3 writes x to three significant digits, rounded up: the rate it
// names must be accepted when given back (1.65e-06 is below the least
// rate, 1.6534e-06).
func roundUp3(x float64) string {
	s := strconv.FormatFloat(x, 'g', 3, 64)
	if p, err := strconv.ParseFloat(s, 64); err == nil && p < x {
		s = strconv.FormatFloat(p+math.Pow(10, math.Floor(math.Log10(p))-2), 'g', 3, 64)
	}
	return s
}
