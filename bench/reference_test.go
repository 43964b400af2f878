package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// The open loop's known answers in time are judged beside a plain C open
// loop (testdata/openref.c) run in turns with the harness on the same
// machine: what that loop gets beyond queueing theory is the machine's
// (a VM whose host takes its CPU for milliseconds gave it +15% to +258%
// of M/D/1's mean response, idle), and the harness may add to it no more
// than the known answer's own tolerance.

// openRef is one run of the reference loop.
type openRef struct {
	ops                       int
	serviceMean, responseMean float64 // ns
	serviceP50, responseP50   int64   // ns
	responseP99               int64   // ns
	responseMax               int64   // ns
	lateMax                   int64   // ns
}

// openRefBinary compiles the reference loop into the test's own temporary
// folder, with the C compiler cgo uses ($CC, else cc); without one the
// test skips saying so.
func openRefBinary(t *testing.T) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		testenv.Skip(t, testenv.CC, "no C compiler (%s) for the reference open loop: %v", cc, err)
	}
	bin := filepath.Join(t.TempDir(), "openref")
	out, err := exec.Command(cc, "-O2", "-Wall", "-Wextra", "-Werror", "-std=gnu11",
		"-pthread", "-o", bin, filepath.Join("testdata", "openref.c"), "-lm").CombinedOutput()
	if err != nil {
		t.Fatalf("%s testdata/openref.c: %v\n%s", cc, err, out)
	}
	return bin
}

// runOpenRef runs the reference loop bin in threads queues, each at rate
// operations per second of cost each, for warmup and then d measured,
// waiting as wait says (WaitSpin or WaitSleep), as an open loop's run
// would.
func runOpenRef(t *testing.T, bin string, threads int, rate float64, cost, warmup, d time.Duration, arrival string, seed int, wait string) openRef {
	t.Helper()
	cmd := exec.Command(bin, fmt.Sprint(rate), fmt.Sprint(cost.Nanoseconds()),
		fmt.Sprint(warmup.Seconds()), fmt.Sprint(d.Seconds()), arrival, fmt.Sprint(seed), wait, fmt.Sprint(threads))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", cmd, err)
	}
	var r openRef
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)),
		"ops=%d service_mean_ns=%g service_p50_ns=%d response_mean_ns=%g response_p50_ns=%d response_p99_ns=%d response_max_ns=%d late_max_ns=%d",
		&r.ops, &r.serviceMean, &r.serviceP50, &r.responseMean, &r.responseP50, &r.responseP99, &r.responseMax, &r.lateMax); err != nil || r.ops == 0 {
		t.Fatalf("the reference open loop printed %q: %v", out, err)
	}
	return r
}

// The reference loop is the queue it models: at a tenth of its capacity
// with fixed arrivals nothing queues, and its response is its service, in
// each of its queues.
func TestOpenRef(t *testing.T) {
	bin := openRefBinary(t)
	for _, tt := range []struct {
		wait    string
		threads int
	}{{WaitSpin, 1}, {WaitSleep, 1}, {WaitSleep, 2}} {
		r := runOpenRef(t, bin, tt.threads, 10000, 10*time.Microsecond, 0, 200*time.Millisecond, ArrivalFixed, 1, tt.wait)
		if want := 2000 * tt.threads; r.ops < want*95/100 || r.ops > want+tt.threads {
			t.Errorf("%s, %d thread(s): %d operations in 200ms at 10000/s each, want %d", tt.wait, tt.threads, r.ops, want)
		}
		if r.serviceMean < 10_000 || r.serviceP50 < 10_000 || r.responseMean < r.serviceMean || r.responseP50 < r.serviceP50 || r.responseP99 < r.responseP50 {
			t.Errorf("%s, %d thread(s): %+v: a service or response under the 10µs cost, or a p99 under the p50", tt.wait, tt.threads, r)
		}
	}
}
