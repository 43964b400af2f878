package verbs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// The sim's locks against the kernel's (docs/design.md, "The sim's
// locks"), as known answers. Each is judged against what the machine gave
// the processes in the same run: a process's time on the run queue
// (schedstat) is time no lock model could use, so it is taken off its
// window; time blocked on the sim's locks is not, since that is what a
// model that serializes would show.

// runLoops starts one "loop" child per spec, starts them together and
// returns what each did.
func runLoops(t *testing.T, specs []childSpec) []loopResult {
	t.Helper()
	var kids []*child
	for _, s := range specs {
		s.Action = "loop"
		ch, err := startChild(s)
		if err != nil {
			t.Fatal(err)
		}
		kids = append(kids, ch)
		t.Cleanup(func() { ch.kill() })
	}
	for _, ch := range kids {
		if _, err := fmt.Fprintln(ch.stdin, "go"); err != nil {
			t.Fatal(err)
		}
	}
	var res []loopResult
	for i, ch := range kids {
		line, err := ch.out.ReadString('\n')
		raw, ok := strings.CutPrefix(strings.TrimSpace(line), "result ")
		if err != nil || !ok {
			t.Fatalf("loop child %d said %q (%v)", i, line, err)
		}
		var r loopResult
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	return res
}

func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:min(3, len(strings.Fields(string(b))))], " ")
}

// TestSimRegsScale: with reg=2us,unreg=2us, N processes of one thread on
// N shared QPs (steady) reach at least 0.875 N times one process's ops/s
// (1.75x at 2, 14x at 16, the figures), the known answer of a
// registration path that runs in parallel as the kernel's does (a
// device-wide lock held across the cost gives 1x). The eighth left over
// is for what parallel readers share: the domain's reader count and the
// CPUs' caches; N-0.25, which 2 CPUs met, asks 16 for 98.4%. Each
// process's rate is over its window less its run-queue time, so a busy
// machine does not fail it; the lone process runs in the same test.
func TestSimRegsScale(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: runs child processes for about 2 s")
	}
	n := min(runtime.NumCPU(), 16) // the 16x1 on a 16-CPU host
	if n < 2 {
		t.Skip("one CPU: nothing runs in parallel")
	}
	dir := t.TempDir()
	o := SimOptions{Dir: filepath.Join(dir, "sim"), Cost: Cost{Reg: 2 * time.Microsecond, Unreg: 2 * time.Microsecond}}
	dev, err := Open(Options{Provider: "sim", Sim: o})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	holder, err := dev.OpenDomain(filepath.Join(dir, "domain"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var qpns []uint32
	for range n {
		q, err := holder.CreateRcvQP()
		if err != nil {
			t.Fatal(err)
		}
		qpns = append(qpns, q)
	}
	spec := childSpec{Options: Options{Provider: "sim", Sim: o}, Domain: holder.Path(), QPNs: qpns, Hold: "pairs",
		Duration: 400 * time.Millisecond}
	rate := func(rs []loopResult) (sum float64, detail string) {
		for _, r := range rs {
			avail := r.Wall - r.RunQueue
			sum += float64(r.Ops) / avail.Seconds()
			detail += fmt.Sprintf(" [%d ops in %v, %v on the run queue, %v on the sim's locks]", r.Ops,
				r.Wall.Round(time.Millisecond), r.RunQueue.Round(time.Millisecond), r.Lock.Round(time.Microsecond))
		}
		return sum, detail
	}
	// Three tries: a try is judged on its own figures, and one in which
	// the machine took most of the window from a process says little.
	var msgs []string
	for try := 0; try < 3; try++ {
		one, d1 := rate(runLoops(t, []childSpec{spec}))
		specs := make([]childSpec, n)
		for i := range specs {
			specs[i] = spec
		}
		all, dn := rate(runLoops(t, specs))
		want := 0.875 * float64(n)
		msg := fmt.Sprintf("%dx1 %.0f ops/s, 1x1 %.0f ops/s: %.2fx, want >= %.2fx (load average %s);%s;%s",
			n, all, one, all/one, want, loadAverage(), d1, dn)
		t.Log(msg)
		if all >= want*one {
			return
		}
		msgs = append(msgs, msg)
	}
	t.Errorf("regs do not run in parallel:\n%s", strings.Join(msgs, "\n"))
}

// TestSimCommandQueue: creates at create=100us through a command queue
// of depth D complete at D per 100 us, within 5%: never more (the queue
// admits D at once), and no fewer than its slots allow over the window,
// less the time the processes' creates spent on the run queue (a slot
// whose holder is not running stalls; each such stall is taken off one
// slot's time). When the run queue leaves the slots less than half their
// time in every try, only the upper bound is judged and the test skips,
// naming the load. Four processes each create and destroy (two commands,
// one of no cost); two processes keeping their QPs fill a slot on two
// CPUs, where a slot handed over at each release through a futex wake
// stood idle for the wake-up: 7,800-8,200 creates a second (9,000-9,450
// since waiters spin for a slot due back soon). Sixteen processes keeping
// theirs at depth 4 are the 16-CPU host's known answer, 40,000 a second;
// with fewer CPUs the run queue takes their slots' time and it skips.
// Each try logs the creates per process and a create's response time
// beside a FIFO queue's (processes x cost / depth): its mean follows from
// the throughput (Little's law, less the loop's own time between
// creates), so the throughput is what is judged; the spread says whether
// the queue is fair. Beside the other packages' tests every case skips
// here, so make timing runs it alone.
func TestSimCommandQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: runs child processes for about 3 s")
	}
	const cost = 100 * time.Microsecond
	for _, tt := range []struct {
		depth, procs int
		hold         string
		window       time.Duration
	}{
		{1, 2, "kept", 500 * time.Millisecond},
		{1, 4, "creates", 500 * time.Millisecond},
		{2, 4, "creates", 500 * time.Millisecond},
		// 40,000 a second: kept for 300 ms, 12,000 QPs fit the sim's
		// 16,384 slots.
		{4, 16, "kept", 300 * time.Millisecond},
	} {
		depth := tt.depth
		t.Run(fmt.Sprintf("depth %d, %d processes, %s", depth, tt.procs, tt.hold), func(t *testing.T) {
			dir := t.TempDir()
			o := SimOptions{Dir: filepath.Join(dir, "sim"), Semantics: Upstream, Cost: Cost{Create: cost, CmdQ: depth}}
			dev, err := Open(Options{Provider: "sim", Sim: o})
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			dom, err := dev.OpenDomain(filepath.Join(dir, "domain"), true)
			if err != nil {
				t.Fatal(err)
			}
			defer dom.Close()
			spec := childSpec{Options: Options{Provider: "sim", Sim: o}, Domain: dom.Path(), Hold: tt.hold,
				Duration: tt.window}
			var msgs []string
			busy := 0
			for try := 0; try < 3; try++ {
				rs := runLoops(t, slices.Repeat([]childSpec{spec}, tt.procs))
				var creates int
				var wall, runq, waited time.Duration
				var each []int
				var resp []int64
				for _, r := range rs {
					creates += r.Ops
					wall = max(wall, r.Wall)
					runq += r.RunQueue
					waited += r.CmdQ
					each = append(each, r.Ops)
					resp = append(resp, r.CreateNS...)
				}
				if len(resp) > 0 {
					slices.Sort(resp)
					var sum int64
					for _, v := range resp {
						sum += v
					}
					t.Logf("creates per process %v; a create's response: mean %v, p50 %v, p99 %v, max %v (a FIFO queue's %v)", each,
						time.Duration(sum/int64(len(resp))), time.Duration(resp[len(resp)/2]), time.Duration(resp[len(resp)*99/100]),
						time.Duration(resp[len(resp)-1]), cost*time.Duration(tt.procs)/time.Duration(depth))
				}
				want := float64(depth) / cost.Seconds()
				got := float64(creates) / wall.Seconds()
				slots := float64(depth)*wall.Seconds() - runq.Seconds()
				floor := max(0, 0.95*slots/cost.Seconds()/wall.Seconds())
				msg := fmt.Sprintf("%d creates in %v: %.0f/s, want %.0f/s (at least %.0f/s for the slot time the run queue left, at most %.0f/s); %v on the run queue, %v waiting for a slot (load average %s)",
					creates, wall.Round(time.Millisecond), got, want, floor, 1.05*want, runq.Round(time.Millisecond),
					waited.Round(time.Millisecond), loadAverage())
				t.Log(msg)
				if got > 1.05*want {
					t.Fatalf("more creates than the queue admits: %s", msg)
				}
				msgs = append(msgs, msg)
				if slots < 0.5*float64(depth)*wall.Seconds() {
					busy++ // the machine's try, not the queue's
					continue
				}
				if got >= floor {
					return
				}
			}
			if busy == len(msgs) {
				t.Skipf("the machine kept the creates on the run queue for over half the slots' time in every try; only the upper bound was judged:\n%s", strings.Join(msgs, "\n"))
			}
			t.Errorf("the command queue's slots idle:\n%s", strings.Join(msgs, "\n"))
		})
	}
}

// TestSimLookupScan: with lookup=list (the kernel before 5.9) a reg's p50
// grows by scan= per live target QP of its domain, within 5%; with the
// xarray lookup (5.9 on) it does not grow (by less than 5% of what the
// list would add).
func TestSimLookupScan(t *testing.T) {
	const scan = 100 * time.Nanosecond
	const few, many = 1, 101
	for _, tc := range []struct {
		lookup string
		grows  time.Duration // per QP
	}{
		{LookupList, scan},
		{LookupXarray, 0},
	} {
		t.Run(tc.lookup, func(t *testing.T) {
			c := Cost{Lookup: tc.lookup}
			if tc.lookup == LookupList {
				c.Scan = scan
			}
			d := simPair(t, SimOptions{Semantics: Upstream, Cost: c}, 1)[0]
			var qpns []uint32
			p50 := func() time.Duration {
				const n = 2000
				b := NewBatch(n)
				for i := range b.QPNs {
					b.QPNs[i] = qpns[0]
				}
				if failed, err := d.RunBatch(OpReg, b, n); err != nil || failed != 0 {
					t.Fatalf("reg batch: %d failed, %v", failed, err)
				}
				ns := append([]uint64(nil), b.NS...)
				if failed, err := d.RunBatch(OpUnreg, b, n); err != nil || failed != 0 {
					t.Fatalf("unreg batch: %d failed, %v", failed, err)
				}
				sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
				return time.Duration(ns[n/2])
			}
			live := func(k int) {
				for len(qpns) < k {
					q, err := d.CreateRcvQP()
					if err != nil {
						t.Fatal(err)
					}
					qpns = append(qpns, q)
				}
			}
			// Median of five pairs of rounds, few then many QPs alive,
			// each pair on its own: the machine's stalls cancel.
			var growth []time.Duration
			for round := 0; round < 5; round++ {
				for len(qpns) > few {
					if _, err := d.Unreg(qpns[len(qpns)-1]); err != nil {
						t.Fatal(err)
					}
					qpns = qpns[:len(qpns)-1]
				}
				live(few)
				a := p50()
				live(many)
				growth = append(growth, p50()-a)
			}
			sort.Slice(growth, func(i, j int) bool { return growth[i] < growth[j] })
			got := growth[len(growth)/2]
			want := tc.grows * (many - few)
			tol := scan * (many - few) * 5 / 100
			t.Logf("%s: reg p50 grew %v from %d to %d live QPs (rounds %v), want %v +- %v", tc.lookup, got, few, many, growth, want, tol)
			if got < want-tol || got > want+tol {
				t.Errorf("%s: reg p50 grew %v from %d to %d live QPs, want %v +- %v", tc.lookup, got, few, many, want, tol)
			}
		})
	}
}
