package testenv

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/loadavg"
)

// A timing test holds on a quiet machine; on a busy one its failure is the
// machine's, and it skips saying how busy the machine was, measured while
// it ran: never the load average, which still counts the minute before
// (a suite that kept both CPUs busy left 1.4-1.6 on an idle 2-CPU VM, and
// skipped the tests after it). Such a skip never fails, whatever
// XRCBENCH_TEST_REQUIRE says: it is the machine's state, not a missing
// install.

// QuietOthers is how many CPUs other processes may keep busy on average
// while a timing test runs for the machine to count as quiet: a measured
// thread then has its CPU, and its harness the other.
const QuietOthers = 0.2

// Load is what the rest of the machine did while a test ran.
type Load struct {
	Others  float64 // CPUs kept busy on average by other processes
	CPUs    int
	LoadAvg float64 // the 1-minute load average after, -1 when unknown
}

// Quiet reports whether other processes kept under QuietOthers CPUs busy.
func (l Load) Quiet() bool { return l.Others < QuietOthers }

func (l Load) String() string {
	return fmt.Sprintf("other processes kept %.2f of %d CPUs busy during the run (quiet: under %.1f; load average %.1f)",
		l.Others, l.CPUs, QuietOthers, l.LoadAvg)
}

// userHZ is the unit of /proc/stat's CPU times (USER_HZ: 100 on every
// Linux architecture Go supports).
const userHZ = 100

// MeasureLoad runs f and measures the CPU time the machine's other
// processes took meanwhile: every CPU's busy time (/proc/stat) less this
// process's and its finished children's (the workers f ran and waited for).
func MeasureLoad(t testing.TB, f func()) Load {
	t.Helper()
	busy0, self0, kids0 := machineBusy(t), cpuOf(t, unix.RUSAGE_SELF), cpuOf(t, unix.RUSAGE_CHILDREN)
	w0 := time.Now()
	f()
	wall := time.Since(w0)
	busy, self, kids := machineBusy(t)-busy0, cpuOf(t, unix.RUSAGE_SELF)-self0, cpuOf(t, unix.RUSAGE_CHILDREN)-kids0
	others := (busy - self - kids).Seconds() / wall.Seconds()
	return Load{Others: max(others, 0), CPUs: runtime.NumCPU(), LoadAvg: loadavg.Read()}
}

// SkipUnlessQuiet skips t when other processes keep QuietOthers CPUs or
// more busy over the next second: for a test that brings a load of its
// own, which MeasureLoad could not tell from the machine's.
func SkipUnlessQuiet(t testing.TB, why string) {
	t.Helper()
	if l := MeasureLoad(t, func() { time.Sleep(time.Second) }); !l.Quiet() {
		t.Skipf("the machine is busy already: %s; %s", l, why)
	}
}

// FailOrSkip reports a timing test's failures: errors on a quiet machine,
// a skip naming them and the load on a busy one. It passes when there are
// none, whatever the load.
func FailOrSkip(t testing.TB, load Load, failures []string) {
	t.Helper()
	if len(failures) == 0 {
		return
	}
	if !load.Quiet() {
		t.Skipf("%s; the machine is too busy to judge: %s", strings.Join(failures, "; "), load)
	}
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("the machine was quiet: %s", load)
}

// machineBusy is the time all CPUs spent busy since boot: /proc/stat's
// first line, all but idle and iowait (guest time is inside user).
func machineBusy(t testing.TB) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatalf("the machine's load: %v", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		t.Fatalf("the machine's load: /proc/stat begins %q", line)
	}
	var ticks int64
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("the machine's load: /proc/stat: %q: %v", line, err)
		}
		if i != 3 && i != 4 {
			ticks += n
		}
	}
	return time.Duration(ticks) * time.Second / userHZ
}

func cpuOf(t testing.TB, who int) time.Duration {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
