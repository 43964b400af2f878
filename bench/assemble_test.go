package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// A repetition whose threads started far apart, or whose measured length
// departs from --duration by more than 5%, is warned about; one timed as
// asked is not. (Before, a 277 ms skew in 1 s repetitions and lengths of
// 0.95-1.49 s went unwarned.)
func TestTimingWarnings(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name     string
		duration time.Duration // 0: an --iterations run
		wall     time.Duration
		skew     time.Duration
		want     []string      // substrings, one warning each
		kinds    []string      // the warnings' kinds
		runq     time.Duration // the last thread's wait for a CPU before its start
	}{
		{"as asked", time.Second, 1010 * ms, 2 * ms, nil, nil, 0},
		{"skew 277ms of 1s", time.Second, 1010 * ms, 277 * ms, []string{"repetition 1: start skew 277ms is 27.7% of its 1s (limit 1%)"}, []string{results.WarnStartSkew}, 0},
		{"long", time.Second, 1490 * ms, 0, []string{"repetition 1: measured 1.49s, +49.0% from the requested 1s (limit ±5%)"}, []string{results.WarnDuration}, 0},
		{"short", time.Second, 940 * ms, 0, []string{"measured 940ms, -6.0% from the requested 1s"}, []string{results.WarnDuration}, 0},
		{"just within", time.Second, 1049 * ms, 9 * ms, nil, nil, 0},
		{"both", 2 * time.Second, 2500 * ms, 100 * ms, []string{"start skew 100ms is 5.0% of its 2s", "+25.0% from the requested 2s"}, []string{results.WarnStartSkew, results.WarnDuration}, 0},
		{"iterations: skew against the measured length", 0, 500 * ms, 20 * ms, []string{"start skew 20ms is 4.0% of its 500ms"}, []string{results.WarnStartSkew}, 0},
		{"iterations: no requested length", 0, 5 * time.Second, 0, nil, nil, 0},
		{"skew, most of it a wait for a CPU", time.Second, 1010 * ms, 12 * ms,
			[]string{"start skew 12ms is 1.2% of its 1s (limit 1%), 11.9ms of it the last thread's wait for a CPU: its threads"}, []string{results.WarnStartSkew}, 11900 * time.Microsecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Two threads: the first on time, the other c.skew later,
			// having waited c.runq of it for a CPU.
			threads := []threadResult{{Thread: 0, Started: 1000}, {Thread: 1, Started: 1000 + uint64(c.skew), StartRunQueueNS: int64(c.runq)}}
			got := timingWarnings([]*repOutcome{{index: 0, wall: c.wall, skew: int64(c.skew), threads: threads}}, Config{Duration: c.duration})
			if len(got) != len(c.want) {
				t.Fatalf("warnings %q, want %d", got, len(c.want))
			}
			for i, w := range c.want {
				g := got[i]
				if !strings.Contains(g.Text, w) {
					t.Errorf("warning %q, want it to say %q", g.Text, w)
				}
				if g.Kind != c.kinds[i] || g.Repetition != 1 || g.Op != "" || g.Severity != results.SeverityWarning {
					t.Errorf("warning %+v, want kind %s, repetition 1, no op kind, severity warning", g, c.kinds[i])
				}
			}
		})
	}
}

func TestSig3(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{{902, "902ns"}, {140433321, "140ms"}, {1234567, "1.23ms"}, {3_500_000_000, "3.5s"}, {0, "0s"}} {
		if got := sig3(c.ns).String(); got != c.want {
			t.Errorf("sig3(%d) = %s, want %s", c.ns, got, c.want)
		}
	}
}

// Known answers of the harness figures from synthetic thread reports:
// coverage is timed over working time (wall less barrier waits), the
// gap figures are the longest per kind and overall with when, the timer
// overhead is the median of every thread's two measurements, memory sums
// a repetition's workers, and each limit crossed is warned about.
func TestHarnessFigures(t *testing.T) {
	thread := func(g int, wall, wait int64, timed map[string]int64, gaps map[string]int64, gap int64, gapKind string, pre, post float64) threadResult {
		tr := threadResult{Thread: g, Started: 1000, Ended: 1000 + uint64(wall), WaitNS: wait, GapNS: gap, GapAtNS: 5000, GapKind: gapKind,
			TimerBeforeNS: pre, TimerAfterNS: post, Kinds: map[string]kindResult{}}
		for k, v := range timed {
			tr.Kinds[k] = kindResult{Count: 1, TimedNS: v, MaxGapNS: gaps[k]}
		}
		return tr
	}
	ops := map[string]results.OpStats{
		"reg":   {Count: 100, NS: results.Latency{P999: 50_000}},
		"unreg": {Count: 100, NS: results.Latency{P999: 20_000}},
	}
	for _, c := range []struct {
		name      string
		threads   []threadResult
		share     float64
		minShare  float64
		maxGap    int64
		gapKind   string
		timer     float64
		open      bool
		warnings  []string
		noWarning []string
	}{
		{
			name: "well covered, steady timer",
			threads: []threadResult{
				thread(0, 1_000_000, 0, map[string]int64{"reg": 600_000, "unreg": 350_000}, map[string]int64{"reg": 10_000, "unreg": 5_000}, 10_000, "reg", 24.6, 25.2),
				thread(1, 1_000_000, 0, map[string]int64{"reg": 500_000, "unreg": 450_000}, map[string]int64{"reg": 8_000, "unreg": 15_000}, 15_000, "unreg", 24.9, 25.0),
			},
			share: 0.95, minShare: 0.95, maxGap: 15_000, gapKind: "unreg", timer: 24.95,
			noWarning: []string{"coverage", "untimed stretch", "timer overhead moved"},
		},
		{
			name: "barrier waits count as neither",
			threads: []threadResult{
				thread(0, 2_000_000, 1_000_000, map[string]int64{"reg": 950_000}, map[string]int64{"reg": 1_000}, 1_000, "reg", 25, 25),
			},
			share: 0.95, minShare: 0.95, maxGap: 1_000, gapKind: "reg", timer: 25,
			noWarning: []string{"coverage"},
		},
		{
			name: "a stall between batches, a timer that moved",
			threads: []threadResult{
				thread(0, 1_000_000, 0, map[string]int64{"reg": 300_000, "unreg": 300_000}, map[string]int64{"reg": 200_000, "unreg": 3_000}, 200_000, "reg", 25, 97),
				thread(1, 1_000_000, 0, map[string]int64{"reg": 500_000, "unreg": 400_000}, map[string]int64{"reg": 3_000, "unreg": 3_000}, 3_000, "unreg", 24, 96),
			},
			share: 0.75, minShare: 0.6, maxGap: 200_000, gapKind: "reg", timer: 60.5,
			warnings: []string{"coverage 75% (least covered thread 60%, limit 90%): the rest of the threads' working time was outside timed operations, a stall there is in no latency (coordinated omission)",
				"reg: an untimed stretch of 200µs before one of its batches (thread 0, repetition 1, 5µs after its start) exceeds its service p99.9 50µs: a stall there is in no latency (coordinated omission)",
				"timer overhead moved during the run: 24.5ns before, 96.5ns after"},
			noWarning: []string{"unreg: an untimed", "due during it"},
		},
		{
			// In an open loop the same stall is in the response time of
			// every operation due during it, not in no latency.
			name: "a stall between batches of an open loop", open: true,
			threads: []threadResult{
				thread(0, 1_000_000, 0, map[string]int64{"reg": 300_000, "unreg": 300_000}, map[string]int64{"reg": 200_000, "unreg": 3_000}, 200_000, "reg", 25, 25),
				thread(1, 1_000_000, 0, map[string]int64{"reg": 500_000, "unreg": 400_000}, map[string]int64{"reg": 3_000, "unreg": 3_000}, 3_000, "unreg", 25, 25),
			},
			share: 0.75, minShare: 0.6, maxGap: 200_000, gapKind: "reg", timer: 25,
			warnings: []string{"coverage 75% (least covered thread 60%, limit 90%): the rest of the threads' working time was outside timed operations, a stall there is in no service time but in the response time of every operation due during it",
				"reg: an untimed stretch of 200µs before one of its batches (thread 0, repetition 1, 5µs after its start) exceeds its service p99.9 50µs: a stall there is in no service time but in the response time of every operation due during it, counted as if the device had queued them: if the stall is the machine's (or the harness's), the response times overstate the device; quiet the machine or --pin the threads and run again"},
			noWarning: []string{"coordinated omission", "unreg: an untimed"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.open {
				for i := range c.threads {
					c.threads[i].Open = &openResult{}
				}
			}
			rep := &repOutcome{threads: c.threads, workers: []*workerProc{
				{done: &doneMsg{RSSKB: 24_000, PSSKB: 11_400}}, {done: &doneMsg{RSSKB: 23_000, PSSKB: 10_600}}}}
			res := &results.Result{Ops: ops}
			harnessFigures(res, []*repOutcome{rep})
			h := res.Harness
			if h.Coverage == nil || math.Abs(h.Coverage.Share-c.share) > 1e-9 || math.Abs(h.Coverage.MinThreadShare-c.minShare) > 1e-9 {
				t.Errorf("coverage %+v, want share %g, least thread %g", h.Coverage, c.share, c.minShare)
			}
			if h.MaxGap == nil || h.MaxGap.NS != c.maxGap || h.MaxGap.Kind != c.gapKind || h.MaxGap.AtNS != 5000 {
				t.Errorf("max gap %+v, want %d before %s at 5000", h.MaxGap, c.maxGap, c.gapKind)
			}
			if h.TimerOverhead == nil || math.Abs(h.TimerOverheadNS-c.timer) > 1e-9 || h.TimerOverhead.Samples != 2*len(c.threads) {
				t.Errorf("timer overhead %g %+v, want median %g of %d", h.TimerOverheadNS, h.TimerOverhead, c.timer, 2*len(c.threads))
			}
			if h.Memory == nil || h.Memory.RSSKB != 47_000 || h.Memory.PSSKB != 22_000 {
				t.Errorf("memory %+v, want RSS 47000 KiB and PSS 22000 KiB summed", h.Memory)
			}
			all := strings.Join(results.WarningTexts(res.Warnings), "\n")
			for _, w := range c.warnings {
				if !strings.Contains(all, w) {
					t.Errorf("warnings %q lack %q", res.Warnings, w)
				}
			}
			for _, w := range c.noWarning {
				if strings.Contains(all, w) {
					t.Errorf("warnings %q say %q", res.Warnings, w)
				}
			}
		})
	}
}

// A thread's untimed stretches: from the end of one batch to the start of
// the next (its end less the time inside its operations), less barrier
// waits, attributed to the kind of the batch that follows. A ring's call
// tells its own (its deck's turns): the longest of them is a stretch of
// its own, never added to the one before the call (a ring of 1 s once
// reported its ten turns and its entry as one stretch of 250 µs, and
// every open loop warned of it).
func TestAccountGaps(t *testing.T) {
	th := &thread{started: 1000, lastEnd: 1000}
	reg, unreg := newKindRec("reg", make([]int64, histCounts), nil), newKindRec("unreg", make([]int64, histCounts), nil)
	th.account(reg, 1150, 50, nil) // ran 1100-1150: 100 untimed before it
	th.waited = 300                // a barrier
	th.account(unreg, 1570, 20, nil)
	th.account(reg, 1_001_580, 10, nil) // a stall of 1 ms after the unreg batch
	if reg.maxGap != 1_000_000 || unreg.maxGap != 100 {
		t.Errorf("longest gaps reg %d unreg %d, want 1000000 and 100 (the barrier's 300 excluded)", reg.maxGap, unreg.maxGap)
	}
	if th.gapNS != 1_000_000 || th.gapAt != 570 || th.gapKind != "reg" {
		t.Errorf("thread's longest gap %d at %d before %q, want 1000000 at 570 before reg", th.gapNS, th.gapAt, th.gapKind)
	}

	// Past the measurement's end (a ring stopped there mid-pass, the pass
	// finished from Go), the stretch before the pass's last batch is in no
	// gap and not working time: it lies after the measurement.
	th = &thread{started: 1000, lastEnd: 1000, loopEnd: 5000}
	reg = newKindRec("reg", make([]int64, histCounts), nil)
	th.account(reg, 1150, 50, nil)   // 100 untimed before it
	th.account(reg, 5030, 30, nil)   // ran 5000-5030: 3850 untimed, before the end
	th.account(reg, 85_070, 40, nil) // 80 µs back from C, after the end
	if th.gapNS != 3850 || th.gapAt != 150 || reg.maxGap != 3850 || th.waitNS != 80_000 {
		t.Errorf("past the end: longest gap %d at %d (kind's %d), waits %d; want 3850 at 150, and the 80000 after the end a wait", th.gapNS, th.gapAt, reg.maxGap, th.waitNS)
	}

	for _, tt := range []struct {
		name    string
		in      verbs.ProgramStats
		gap, at uint64
	}{
		// A call of 1 s from 2000: 40 ns before its first step, ten turns
		// of 20 µs, the longest at 500_000_000.
		{"turns longer than the entry", verbs.ProgramStats{UntimedNS: 200_000, UntimedMaxNS: 25_000, UntimedMaxAt: 500_000_000}, 25_000, 500_000_000 - 1000},
		{"an entry longer than the turns", verbs.ProgramStats{UntimedNS: 200_000 - 70_000, UntimedMaxNS: 20_000, UntimedMaxAt: 500_000_000}, 70_040, 1000},
		{"no turn", verbs.ProgramStats{}, 200_040, 1000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			th := &thread{started: 1000, lastEnd: 2000}
			rec := newKindRec("reg", make([]int64, histCounts), nil)
			const timed = 1_000_000_000 - 200_000
			th.account(rec, 2000+40+1_000_000_000, timed, &tt.in)
			if th.gapNS != tt.gap || th.gapAt != tt.at || rec.maxGap != int64(tt.gap) {
				t.Errorf("longest gap %d at %d (kind's %d), want %d at %d", th.gapNS, th.gapAt, rec.maxGap, tt.gap, tt.at)
			}
		})
	}
}

// The saturation verdict judges the sustained backlog: a run at ρ = 0.8
// that one stall in its last moments left thousands of operations behind
// (a SCHED_FIFO run throttled at its end: 4043 operations unrun) kept up,
// and the warning names the stall at the end instead; a run more than the
// limit behind for most of its time did not keep up, whatever its end.
func TestSaturationVerdict(t *testing.T) {
	const s = uint64(time.Second)
	ms := uint64(time.Millisecond)
	for _, c := range []struct {
		name      string
		ops       int64
		end, over uint64 // backlog at the end; time beyond the limit
		saturated bool
		warn      string // "": no warning
	}{
		{"kept up", 80_000, 20_000, 0, false, ""},
		// 4043 operations due in the last 50 ms were not run: 95% achieved
		{"stall at the end", 80_000 - 4043, 50 * ms, 50 * ms, false,
			"the last operations began 50ms behind their intended starts, and about 4000 due before the end were not run (achieved 7.6e+04 ops/s of the 8e+04 requested); the backlog was beyond 10ms for only 5% of the measurement, so this is a stall at the end"},
		{"stall in the middle, drained", 80_000, 100_000, 300 * ms, false, ""},
		{"sustained", 66_000, 170 * ms, 900 * ms, true,
			"open loop saturated: a thread was more than 10ms behind its schedule for 90% of its measurement (the backlog 170ms at the end, at most 170ms; achieved 6.6e+04 ops/s of the 8e+04 requested): it did not keep up, and the response times measure the queue; lower --rate"},
		{"half the time", 70_000, 60 * ms, s / 2, true, "open loop saturated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := threadResult{Started: s, Ended: 2 * s, Kinds: map[string]kindResult{"reg": {Count: c.ops}},
				Open: &openResult{BehindNS: int64(c.end), BehindMaxNS: int64(max(c.end, 170*ms)), OverNS: int64(c.over), LimitNS: int64(backlogLimit(time.Second))}}
			res := &results.Result{}
			openLoopFigures(res, []*repOutcome{{threads: []threadResult{tr}}}, Config{Rate: 80_000, Procs: 1, Threads: 1}, 1)
			ol := res.OpenLoop
			if ol.Saturated != c.saturated || ol.BacklogOverShare != float64(c.over)/float64(s) || ol.BacklogLimitNS != int64(10*ms) {
				t.Errorf("saturated %v (backlog beyond %v for a share %g), want %v", ol.Saturated, time.Duration(ol.BacklogLimitNS), ol.BacklogOverShare, c.saturated)
			}
			if c.warn == "" {
				if len(res.Warnings) != 0 {
					t.Errorf("warnings %q, want none", res.Warnings)
				}
			} else if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Text, c.warn) {
				t.Errorf("warnings %q, want one saying %q", res.Warnings, c.warn)
			}
		})
	}
	// A thread behind throughout is behind for all of the window its
	// backlog is counted in (its schedule began 12 ms before its own
	// start): the share is 1, not the 1.012 its start and end gave.
	t.Run("behind throughout", func(t *testing.T) {
		tr := threadResult{Started: s, Ended: 2 * s, Kinds: map[string]kindResult{"reg": {Count: 40_000}},
			Open: &openResult{BehindNS: int64(s / 2), BehindMaxNS: int64(s / 2), OverNS: int64(s + 12*ms), SampledNS: int64(s + 12*ms),
				LimitNS: int64(backlogLimit(time.Second))}}
		res := &results.Result{}
		openLoopFigures(res, []*repOutcome{{threads: []threadResult{tr}}}, Config{Rate: 80_000, Procs: 1, Threads: 1}, 1)
		if ol := res.OpenLoop; ol.BacklogOverShare != 1 || !ol.Saturated {
			t.Errorf("share %g, saturated %v; want 1 and saturated", ol.BacklogOverShare, ol.Saturated)
		}
	})
	for d, want := range map[time.Duration]time.Duration{0: 10 * time.Millisecond, time.Second: 10 * time.Millisecond, 100 * time.Millisecond: 5 * time.Millisecond} {
		if got := backlogLimit(d); got != want {
			t.Errorf("backlogLimit(%v) = %v, want %v", d, got, want)
		}
	}
}
