package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// The pass arithmetic of a ring: how many steps make k more passes from
// where the thread is, and how many passes a call that wrapped went past.
// Known answers, then every start and count on a ring of uneven passes,
// each step count run through passesCrossed as the C loop stops (a wrap
// only when it goes on: it may stop at the ring's end).
func TestRingPasses(t *testing.T) {
	r := &progRT{n: 6, passEnds: []int{2, 4, 6}}
	for _, tt := range []struct {
		from, to int
		laps     uint64
		want     int64
	}{{0, 6, 0, 3}, {1, 3, 0, 1}, {5, 2, 1, 2}, {3, 3, 2, 6}, {0, 6, 1, 6}, {4, 4, 0, 0}, {0, 0, 1, 3}} {
		if got := r.passesCrossed(tt.from, tt.to, tt.laps); got != tt.want {
			t.Errorf("passesCrossed(%d, %d, %d laps) = %d, want %d", tt.from, tt.to, tt.laps, got, tt.want)
		}
	}
	r.pos, r.passIdx = 3, 1
	for k, want := range map[int64]uint64{1: 1, 2: 3, 3: 5, 5: 9} {
		if got := r.stepsFor(k); got != want {
			t.Errorf("from step 3: stepsFor(%d) = %d, want %d", k, got, want)
		}
	}
	r = &progRT{n: 7, passEnds: []int{1, 4, 7}}
	for pos := range r.n {
		r.pos, r.passIdx = pos, 0
		for r.passIdx < len(r.passEnds) && r.passEnds[r.passIdx] <= pos {
			r.passIdx++
		}
		for k := int64(1); k <= 10; k++ {
			end := uint64(pos) + r.stepsFor(k) // in steps from the ring's start
			laps := (end - 1) / uint64(r.n)
			to := int(end - laps*uint64(r.n))
			if got := r.passesCrossed(pos, to, laps); got != k {
				t.Errorf("from step %d, %d passes: %d steps end at %d after %d laps, which crosses %d passes", pos, k, r.stepsFor(k), to, laps, got)
			}
			if !slices.Contains(r.passEnds, to) {
				t.Errorf("from step %d, %d passes end at step %d: not a pass end", pos, k, to)
			}
		}
	}
}

// A stop asked for while a thread runs its ring ends the ring at once and
// the thread's loop at the end of the pass under way: every reg has its
// unreg, and the thread holds nothing. The thread ran in one or a few
// calls, not one per program.
func TestRingStop(t *testing.T) {
	th := nullThread(t, "steady", 5, nil)
	th.measuring, th.ivNext = true, never
	asked := make(chan struct{}) // the race detector does not see the shared segment's atomics
	go func() {
		defer close(asked)
		time.Sleep(50 * time.Millisecond)
		th.shm.requestStop()
	}()
	defer func() { <-asked }()
	t0 := verbs.Now()
	if err := th.loop(func(uint64, int64) bool { return th.shm.stopRequested() }); err != nil {
		t.Fatal(err)
	}
	took := time.Duration(verbs.Now() - t0)
	reg, unreg := th.recs[0], th.recs[1]
	if reg.count == 0 || reg.count != unreg.count || reg.count%5 != 0 {
		t.Errorf("%d regs and %d unregs: want whole passes of 5 each", reg.count, unreg.count)
	}
	if !th.prog.atPassEnd() {
		t.Errorf("the loop ended at step %d, not at a pass end", th.prog.pos)
	}
	if took > 2*time.Second {
		t.Errorf("the stop took %v to be seen", took)
	}
	// One call for the ring, one to finish the pass it stopped in: in
	// programs of 4096 steps, 50 ms would take hundreds.
	if reg.batches > 3 {
		t.Errorf("%d regs in %d calls: the ring returned into Go every %d passes", reg.count, reg.batches, reg.count/reg.batches/5)
	}
	th.settle()
	for s, h := range th.held {
		if h {
			t.Errorf("slot %d still held", s)
		}
	}
}

// A ring does not come back into Go at an interval's end: the C loop ends
// each interval in the thread's deck and its flusher reports it. One call
// of 110 ms at 20 ms intervals comes back at the loop's end, having ended
// four intervals or more (fewer only on a machine that kept the thread
// off the CPU past an end), each reported after the one before; with the
// last, ended in Go, the reports hold every operation the thread counted.
func TestRingIntervals(t *testing.T) {
	defer func(d uint64) { repeatCallMax = d }(repeatCallMax)
	repeatCallMax = uint64(time.Hour)
	th := nullThread(t, "steady", 1, func(c *workerConfig) { c.Interval = 20 * time.Millisecond })
	// The thread's flusher sends the reports while the thread goes on.
	sent := make(chan *intervalMsg, 64)
	th.report = func(m *intervalMsg) { sent <- m }
	th.flush = startFlusher(th)
	now := verbs.Now()
	th.measuring, th.started, th.loopEnd = true, now, now+uint64(110*time.Millisecond)
	th.beginIntervals(now)
	if _, err := th.loopChunk(0); err != nil {
		t.Fatal(err)
	}
	if end := verbs.Now(); end < th.loopEnd {
		t.Errorf("the call came back %v before the loop's end", time.Duration(th.loopEnd-end))
	}
	inC := len(sent) // what the C loop ended (the flusher may lag: waited for below)
	if err := th.endMeasuring(nil); err != nil {
		t.Fatal(err)
	}
	var reports []*intervalMsg
	for len(sent) > 0 {
		reports = append(reports, <-sent)
	}
	if len(reports) < 5 || inC > len(reports) {
		t.Errorf("%d intervals reported in all, %d before the loop's end: want 5 or more", len(reports), inC)
	}
	var logged int64
	for i, m := range reports {
		if i > 0 && (m.Index <= reports[i-1].Index || m.End <= reports[i-1].End) {
			t.Errorf("interval %d (end %d) reported after %d (end %d)", m.Index, m.End, reports[i-1].Index, reports[i-1].End)
		}
		if m.Start != th.started {
			t.Errorf("interval %d says the thread started at %d, not %d", m.Index, m.Start, th.started)
		}
		for _, s := range m.Hists {
			h, err := results.DecodeHistogram(s)
			if err != nil {
				t.Fatal(err)
			}
			logged += h.TotalCount()
		}
	}
	if want := th.recs[0].count + th.recs[1].count; logged != want || want == 0 {
		t.Errorf("the intervals hold %d operations, the thread counted %d", logged, want)
	}
}

// An open loop runs as a ring too: one call into C runs every arrival due
// before the loop's end, each drawn by the C loop from the thread's
// schedule, and the thread is back in Go at the end, not once a
// millisecond (each return of a call that slept cost 15-40 µs during
// which due arrivals waited). The schedule goes on where Go left it: the
// warm-up's (drawn in Go, in ranges) and the ring's are one.
func TestOpenRing(t *testing.T) {
	defer func(d uint64) { repeatCallMax = d }(repeatCallMax)
	repeatCallMax = uint64(time.Hour)
	for _, arrival := range []string{ArrivalFixed, ArrivalPoisson} {
		t.Run(arrival, func(t *testing.T) {
			th := nullThread(t, "steady", 2, func(c *workerConfig) { c.Rate, c.Arrival, c.Seed = 20000, arrival, 3 })
			now := verbs.Now()
			th.open.begin(now)
			// A few ranges drawn in Go first, as a program run in chunks does.
			th.prog.built = false
			th.buildLoop()
			start := make([]uint64, 5)
			want := th.open.schedule(start, 0, len(start), uint64(time.Hour))
			ref := verbs.NewArrivals(1e9/20000, arrival == ArrivalPoisson, 3, 0x9e3779b97f4a7c15)
			ref.Next = now
			for i := range want {
				if start[i] != ref.Next {
					t.Fatalf("arrival %d at %d, the schedule's %d", i, start[i]-now, ref.Next-now)
				}
				ref.Advance()
			}
			const span = 100 * time.Millisecond
			end := now + uint64(span)
			th.loopEnd = end
			th.openLoopEnds(end)
			th.measuring, th.ivNext, th.started, th.lastEnd = true, never, now, now
			if err := th.loop(func(n uint64, _ int64) bool { return n >= end }); err != nil {
				t.Fatal(err)
			}
			reg, unreg := th.recs[0], th.recs[1]
			ran := reg.count + unreg.count
			// 2000 arrivals in 100 ms, the Poisson count within 5 sd, unless
			// the machine kept the thread so far behind that some were
			// still due at the end (left unrun, as ever).
			if drawn := int64(th.open.a.Scheduled); ran != drawn-int64(want) || ran > 2250 || th.open.over() && ran < 1750 {
				t.Errorf("ran %d operations of %d arrivals drawn (%d in Go before; over %v), want 2000 in %v", ran, drawn, want, th.open.over(), span)
			}
			if reg.batches > 3 || th.open.waits == 0 {
				t.Errorf("%d operations in %d calls, %d waits: want the ring, waiting for its arrivals", ran, reg.batches, th.open.waits)
			}
			// The next arrival is the one after those run: the ring drew from
			// where Go had left the schedule.
			for range ran {
				ref.Advance()
			}
			if th.open.a.Next != ref.Next {
				t.Errorf("the schedule goes on at %v, want %v", time.Duration(th.open.a.Next-now), time.Duration(ref.Next-now))
			}
			th.settle()
		})
	}
}
