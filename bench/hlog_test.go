package bench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/internal/hdrv2"
	"github.com/xrcbench/xrcbench/internal/safedir"
	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/results/resultstest"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// testDir is the folder dir opened as a run's temporary folder is, closed
// at the end of the test.
func testDir(tb testing.TB, dir string) *safedir.Dir {
	tb.Helper()
	d, err := safedir.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// ivMsg is thread's report of interval idx holding n reg latencies.
func ivMsg(t *testing.T, thread int, idx int64, n int) *intervalMsg {
	t.Helper()
	h := results.NewHistogram()
	for i := 0; i < n; i++ {
		h.RecordValue(1000)
	}
	enc, err := results.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return &intervalMsg{Thread: thread, Index: idx, Hists: map[string]string{"reg": enc}}
}

// A thread that lags: its report of an interval still pending merges into
// it; its report of one already written (the others ran far ahead) is
// written late, as a line of its own with that interval's start time, so
// the log still holds every latency (before, it went to the totals only).
func TestHlogsLateReport(t *testing.T) {
	dir := t.TempDir()
	l, err := newHlogs(testDir(t, dir), "test-run", []string{"reg"}, time.Now(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l.startRep(2)
	base := verbs.Now()
	sec := uint64(time.Second)
	steps := []struct {
		thread int
		idx    int64
		n      int
	}{
		{0, 0, 1}, {0, 1, 2}, {0, 2, 4}, {0, 3, 8}, {0, 4, 16}, // thread 0 runs ahead: 0 and 1 are written
		{1, 0, 100}, // late: interval 0 is in the log already
		{1, 2, 200}, // still pending: merged
		{1, 3, 400},
		{1, 4, 800},
	}
	var sum int64
	for _, s := range steps {
		m := ivMsg(t, s.thread, s.idx, s.n)
		m.End = base + uint64(s.idx+1)*sec
		if s.idx == 0 {
			m.Start = base
		}
		if err := l.add(m); err != nil {
			t.Fatal(err)
		}
		sum += int64(s.n)
	}
	l.endRep(base, base+5*sec)
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	if l.late != 1 {
		t.Errorf("%d late reports, want 1", l.late)
	}
	if got := l.totals["reg"].TotalCount(); got != sum {
		t.Errorf("totals hold %d latencies, want all %d", got, sum)
	}

	f, err := os.Open(filepath.Join(dir, "reg.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	type line struct{ startMs, count int64 }
	var lines []line
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		lines = append(lines, line{h.StartTimeMs(), h.TotalCount()})
	}
	// In file order: 0 and 1 when thread 0 ran ahead, the late part of 0,
	// then 2 to 4 merged.
	wantCounts := []int64{1, 2, 100, 4 + 200, 8 + 400, 16 + 800}
	wantIdx := []int64{0, 1, 0, 2, 3, 4}
	if len(lines) != len(wantCounts) {
		t.Fatalf("lines %v, want counts %v", lines, wantCounts)
	}
	var logged int64
	for i, ln := range lines {
		logged += ln.count
		if ln.count != wantCounts[i] || ln.startMs-lines[0].startMs != wantIdx[i]*1000 {
			t.Errorf("line %d: %d latencies at +%d ms, want %d at +%d ms", i, ln.count, ln.startMs-lines[0].startMs, wantCounts[i], wantIdx[i]*1000)
		}
	}
	if logged != sum {
		t.Errorf("the log holds %d latencies, want all %d", logged, sum)
	}
}

// An interval whose histogram cannot be encoded is an error of the thread
// (so of the run), naming the kind and how many latencies it held; never
// dropped in silence.
func TestIntervalEncodeFailure(t *testing.T) {
	// Programs of 4 steps: the first is the 4 regs.
	th := nullThread(t, "steady", 4, func(c *workerConfig) { c.BatchOps = 4 })
	var reported []*intervalMsg
	th.report = func(m *intervalMsg) { reported = append(reported, m) }
	defer func(f func(*hdrv2.Encoder, []int64) (string, error)) { encodeInterval = f }(encodeInterval)
	encodeInterval = func(*hdrv2.Encoder, []int64) (string, error) { return "", errors.New("no space in the encoder") }

	th.measuring, th.ivNext = true, 0 // the first batch ends the interval
	if _, err := th.loopChunk(0); err != nil {
		t.Fatal(err)
	}
	// The flusher encodes the interval while the thread goes on; its
	// failure is the thread's at its next return into Go (the C loop ends
	// the intervals after the first, in the deck), and at the
	// measurement's end (closeFlush) at the latest.
	for deadline := time.Now().Add(10 * time.Second); th.flush.failure() == nil && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if th.flush.failure() == nil {
		t.Fatal("the flusher never failed to encode the interval")
	}
	th.ivNext = 0
	if _, err := th.loopChunk(0); err == nil || err.Error() != th.flush.failure().Error() {
		t.Errorf("the next return into Go = %v, want the encoding failure (%v)", err, th.flush.failure())
	}
	err := th.closeFlush()
	if err == nil || !strings.Contains(err.Error(), "encoding the reg latencies of interval 0 (4 operations)") ||
		!strings.Contains(err.Error(), "no space in the encoder") {
		t.Errorf("err = %v, want the encoding failure named", err)
	}
	if len(reported) != 0 {
		t.Errorf("reported %d interval(s) with a histogram missing", len(reported))
	}
}

// hdrJS runs HdrHistogram's JavaScript reader (../results/testdata/hdrjs.js)
// or skips the test saying what is missing.
func hdrJS(t *testing.T, args ...string) string {
	t.Helper()
	node := hdrJSReady(t)
	out, err := exec.Command(node, append([]string{filepath.Join("..", "results", "testdata", "hdrjs.js")}, args...)...).Output()
	if err != nil {
		t.Fatalf("node hdrjs.js %v: %v", args, err)
	}
	return string(out)
}

// hdrJSReady is node's path, or skips the test saying what is missing
// (before a test spends time on a run the reader could not read).
func hdrJSReady(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, testenv.Node, "node is not installed: the independent HdrHistogram reader (npm hdr-histogram-js) cannot run")
	}
	if err := exec.Command(node, "-e", `require("hdr-histogram-js")`).Run(); err != nil {
		testenv.Skip(t, testenv.Node, "npm module hdr-histogram-js not found by node: `npm install hdr-histogram-js` in a folder and set NODE_PATH=that/node_modules")
	}
	return node
}

// The log's StartTime and BaseTime carry milliseconds, as the format
// defines, so base + an interval's timestamp is the interval's absolute
// start to the millisecond, read from the text itself and by HdrHistogram's
// JavaScript reader. (hdrhistogram-go's writer cut both to whole seconds:
// every interval decoded up to a second early.)
func TestHlogAbsoluteTimes(t *testing.T) {
	dir := t.TempDir()
	start := time.Unix(1796084174, 216_700_000) // .216 s: not whole
	l, err := newHlogs(testDir(t, dir), "test-run", []string{"reg"}, start, 250*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	l.startRep(1)
	// The repetition's threads began 1.5 s after the run (whole ms, for the
	// comparison with the text's).
	base := verbs.Now()
	l.monoWall = start.Add(1500*time.Millisecond).UnixNano() - int64(base)
	iv := uint64(250 * time.Millisecond)
	for i := int64(0); i < 4; i++ {
		m := ivMsg(t, 0, i, int(i)+1)
		m.End = base + uint64(i+1)*iv
		if i == 0 {
			m.Start = base
		}
		if err := l.add(m); err != nil {
			t.Fatal(err)
		}
	}
	l.endRep(base, base+4*iv)
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	var want []int64 // absolute start of each interval, to the nearest ms since the epoch
	for i := 0; i < 4; i++ {
		want = append(want, start.Add(1500*time.Millisecond+time.Duration(i)*250*time.Millisecond).Round(time.Millisecond).UnixMilli())
	}
	path := filepath.Join(dir, "reg.hlog")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var startSec, baseSec float64
	var got []int64
	for _, ln := range strings.Split(string(text), "\n") {
		switch {
		case strings.HasPrefix(ln, "#[StartTime: "):
			f := strings.Fields(strings.TrimPrefix(ln, "#[StartTime: "))
			if !strings.HasSuffix(f[0], ".216") {
				t.Errorf("StartTime %q, want 1796084174.216 (seconds, with milliseconds)", f[0])
			}
			startSec, _ = strconv.ParseFloat(f[0], 64)
		case strings.HasPrefix(ln, "#[BaseTime: "):
			f := strings.Fields(strings.TrimPrefix(ln, "#[BaseTime: "))
			baseSec, err = strconv.ParseFloat(f[0], 64)
			if err != nil {
				t.Fatalf("BaseTime line %q: %v", ln, err)
			}
		case ln == "" || strings.HasPrefix(ln, "#") || strings.HasPrefix(ln, `"`):
		default:
			ts, err := strconv.ParseFloat(strings.Split(ln, ",")[0], 64)
			if err != nil {
				t.Fatalf("interval line %q: %v", ln, err)
			}
			got = append(got, int64(math.Round((baseSec+ts)*1000)))
		}
	}
	if startSec != 1796084174.216 || baseSec != startSec {
		t.Errorf("StartTime %.3f, BaseTime %.3f: want both 1796084174.216", startSec, baseSec)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("interval starts from the text %v ms, want %v", got, want)
	}

	var js []int64
	for _, ln := range strings.Split(strings.TrimSpace(hdrJS(t, "hlog", path)), "\n") {
		f := strings.Fields(ln)
		ms, _ := strconv.ParseInt(f[0], 10, 64)
		end, _ := strconv.ParseInt(f[1], 10, 64)
		if end-ms != 250 {
			t.Errorf("JS reader: interval %q is %d ms long, want 250", ln, end-ms)
		}
		js = append(js, ms)
	}
	if fmt.Sprint(js) != fmt.Sprint(want) {
		t.Errorf("JS reader: interval starts %v ms, want %v", js, want)
	}
}

// The coordinator's bookkeeping of an interval's time, read back by
// HdrHistogram's JavaScript reader: an interval runs from where the one
// before it ended (the first from the earliest thread start) to where its
// last thread left it, overrun included; every kind has a line for every
// interval; an interval no thread reported is in the next one; and the
// repetition ends where its threads did. Times in ms from the repetition's
// CLOCK_MONOTONIC base, mapped to 1 s after the log's start.
func TestHlogIntervalSpans(t *testing.T) {
	type report struct {
		thread     int
		idx        int64
		start, end int // ms; start 0: not the thread's first report
		reg, unreg int // latencies
	}
	type line struct{ from, to, reg, unreg int }
	for _, tt := range []struct {
		name     string
		threads  int
		reports  []report
		repStart int // the threads' span (threadSpan)
		repEnd   int
		want     []line
	}{
		{"overrun stays in its interval", 1,
			[]report{{0, 0, 1, 130, 5, 5}, {0, 1, 0, 250, 3, 3}}, 1, 250,
			[]line{{1, 130, 5, 5}, {130, 250, 3, 3}}},
		{"a kind absent has an empty line", 1,
			[]report{{0, 0, 1, 100, 4, 0}, {0, 1, 0, 180, 0, 6}}, 1, 180,
			[]line{{1, 100, 4, 0}, {100, 180, 0, 6}}},
		{"an interval nobody reported is in the next", 1,
			[]report{{0, 0, 1, 100, 2, 2}, {0, 3, 0, 350, 1, 1}}, 1, 350,
			[]line{{1, 100, 2, 2}, {100, 350, 1, 1}}},
		{"the threads went on past their last operation", 1,
			[]report{{0, 0, 1, 100, 2, 2}}, 1, 160,
			[]line{{1, 100, 2, 2}, {100, 160, 0, 0}}},
		{"a repetition of no operations", 2,
			nil, 20, 300,
			[]line{{20, 300, 0, 0}}},
		{"the latest thread ends it, the earliest starts it", 2,
			[]report{{0, 0, 10, 100, 1, 1}, {1, 0, 30, 104, 2, 2}, {0, 1, 0, 200, 3, 3}, {1, 1, 0, 190, 4, 4}}, 10, 200,
			[]line{{10, 104, 3, 3}, {104, 200, 7, 7}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hdrJSReady(t)
			dir := t.TempDir()
			start := time.UnixMilli(1_700_000_000_000)
			l, err := newHlogs(testDir(t, dir), "test-run", []string{"reg", "unreg"}, start, 100*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			l.startRep(tt.threads)
			base := uint64(time.Hour)
			l.monoWall = start.Add(time.Second).UnixNano() - int64(base)
			ms := func(d int) uint64 { return base + uint64(d)*uint64(time.Millisecond) }
			for _, r := range tt.reports {
				m := &intervalMsg{Thread: r.thread, Index: r.idx, End: ms(r.end), Hists: map[string]string{}}
				if r.start > 0 {
					m.Start = ms(r.start)
				}
				for kind, n := range map[string]int{"reg": r.reg, "unreg": r.unreg} {
					if n == 0 {
						continue
					}
					h := results.NewHistogram()
					h.RecordValues(1000, int64(n))
					if m.Hists[kind], err = results.EncodeHistogram(h); err != nil {
						t.Fatal(err)
					}
				}
				if err := l.add(m); err != nil {
					t.Fatal(err)
				}
			}
			l.endRep(ms(tt.repStart), ms(tt.repEnd))
			if err := l.close(); err != nil {
				t.Fatal(err)
			}
			at := float64(start.Add(time.Second).UnixMilli())
			for _, kind := range []string{"reg", "unreg"} {
				var got []line
				for _, ln := range strings.Split(strings.TrimSpace(hdrJS(t, "hlogus", filepath.Join(dir, kind+".hlog"))), "\n") {
					var from, to float64
					var n, mx int64
					if _, err := fmt.Sscan(ln, &from, &to, &n, &mx); err != nil {
						t.Fatalf("%s: JS reader line %q: %v", kind, ln, err)
					}
					g := line{from: int(math.Round(from - at)), to: int(math.Round(to - at))}
					if math.Abs(from-at-float64(g.from)) > 0.002 || math.Abs(to-at-float64(g.to)) > 0.002 {
						t.Errorf("%s: line %q is not at whole ms from the base: %.4f to %.4f", kind, ln, from-at, to-at)
					}
					if kind == "reg" {
						g.reg = int(n)
					} else {
						g.unreg = int(n)
					}
					got = append(got, g)
				}
				var want []line
				for _, w := range tt.want {
					if kind == "reg" {
						w.unreg = 0
					} else {
						w.reg = 0
					}
					want = append(want, w)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: lines (from, to ms, counts) %v, want %v", kind, got, want)
				}
			}
		})
	}
}

// Threads released at the start line begin measuring a little after it
// (tens of ms on a busy machine): the repetition's length, which its ops/s
// divide by, runs from the earliest thread's start, and so must the
// timelines' first interval, or a reader's counts over lengths come out
// low (3% in a 2-repetition run at load average 11 before). Two threads,
// starting 40 and 70 ms after the line, 250 ms intervals, the measurement
// ending at 600 ms: the lengths are 210, 250 and 100 ms.
func TestHlogFirstIntervalFromThreadStart(t *testing.T) {
	hdrJSReady(t)
	dir := t.TempDir()
	// The run began 2 s ago, the repetition's start line 1 s ago.
	l, err := newHlogs(testDir(t, dir), "test-run", []string{"reg"}, time.Now().Add(-2*time.Second), 250*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	l.startRep(2)
	base := verbs.Now() - uint64(time.Second)
	ms := func(d int) uint64 { return base + uint64(d)*uint64(time.Millisecond) }
	for _, m := range []struct {
		thread     int
		idx        int64
		start, end uint64
	}{
		{0, 0, ms(40), ms(250)}, {1, 0, ms(70), ms(250)},
		{0, 1, 0, ms(500)}, {1, 1, 0, ms(500)},
		{0, 2, 0, ms(600)}, {1, 2, 0, ms(590)},
	} {
		msg := ivMsg(t, m.thread, m.idx, 10)
		msg.Start, msg.End = m.start, m.end
		if err := l.add(msg); err != nil {
			t.Fatal(err)
		}
	}
	l.endRep(ms(40), ms(600))
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	var lengths []int64
	for _, ln := range strings.Split(strings.TrimSpace(hdrJS(t, "hlog", filepath.Join(dir, "reg.hlog"))), "\n") {
		var start, end int64
		if _, err := fmt.Sscan(ln, &start, &end); err != nil {
			t.Fatalf("JS reader line %q: %v", ln, err)
		}
		lengths = append(lengths, end-start)
	}
	// Milliseconds since the epoch, each end rounded on its own: ±1.
	want := []int64{210, 250, 100}
	ok := len(lengths) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = math.Abs(float64(lengths[i]-want[i])) <= 1
	}
	if !ok {
		t.Errorf("interval lengths %v ms, want %v (±1)", lengths, want)
	}
}

// A total histogram that cannot be encoded fails the run as an interval's
// does: assemble says which kind and how many latencies, and result.json
// does not carry a summary without its histogram.
func TestTotalEncodeFailure(t *testing.T) {
	h := results.NewHistogram()
	for i := int64(1); i <= 5; i++ {
		if err := h.RecordValue(i * 1000); err != nil {
			t.Fatal(err)
		}
	}
	ok := results.NewHistogram()
	if err := ok.RecordValue(700); err != nil {
		t.Fatal(err)
	}
	rep := &repOutcome{wall: time.Second, measured: true,
		threads: []threadResult{{Kinds: map[string]kindResult{"reg": {Count: 5, Batches: 1}, "unreg": {Count: 1, Batches: 1}}}},
		hists:   map[string]*hdrhistogram.Histogram{"reg": h, "unreg": ok}}
	encodeHistogram = func(x *hdrhistogram.Histogram) (string, error) {
		if x.TotalCount() == 5 {
			return "", errors.New("no space in the encoder")
		}
		return results.EncodeHistogram(x)
	}
	defer func() { encodeHistogram = results.EncodeHistogram }()
	res := &results.Result{Ops: map[string]results.OpStats{}}
	err := assemble(res, []*repOutcome{rep}, Config{Workload: &workloads.Spec{}})
	if err == nil || !strings.Contains(err.Error(), "encoding the total reg latencies (5 operations): no space in the encoder") {
		t.Fatalf("assemble = %v, want the reg encoding error", err)
	}
	if _, in := res.Histograms["reg"]; in {
		t.Errorf("reg histogram written despite the failure")
	}
	if _, in := res.Histograms["unreg"]; !in {
		t.Errorf("unreg histogram lost: %v", res.Histograms)
	}
}

// A real run's .hlog, read by HdrHistogram's JavaScript reader: each
// interval covers the time of what it holds, so in every repetition and
// for every kind the log's count over its summed Interval_Length is
// result.json's ops_per_sec for that kind and repetition (within 1%), for
// every built-in workload, a run of --iterations and an open loop (whose
// response logs too). Intervals follow one another without overlapping,
// and none runs past the run. Before, a storm's intervals were measured
// from a later start line (its teardown's) and lasted 0-43 ms of
// repetitions of 7-157 ms; a loop's or a round's interval was cut at its
// planned end while the overrun's operations stayed in it; a kind absent
// from an interval had no line there, so its lengths summed short (churn's
// unreg_last 1.053 s against create's 1.000 s); and lengths carried
// milliseconds, a tenth of a storm's repetition.
func TestHlogRatesHdrJS(t *testing.T) {
	cost := verbs.Cost{Create: 100 * time.Microsecond, Reg: 10 * time.Microsecond, Unreg: 10 * time.Microsecond}
	for _, tt := range []struct {
		name, workload string
		set            func(*Config)
	}{
		{"steady", "steady", nil},
		{"sharded", "sharded", nil},
		{"lifecycle", "lifecycle", nil},
		{"churn", "churn", nil},
		{"errors", "errors", nil},
		{"storm", "storm", func(c *Config) { c.Repetitions = 3; c.StormDefaults() }},
		{"iterations", "steady", func(c *Config) { c.Duration, c.Iterations = 0, 3000 }},
		{"rate", "steady", func(c *Config) { c.Rate = 2000 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hdrJSReady(t)
			cfg := testConfig(t, tt.workload, "sim", 2, 1, 4)
			cfg.SimCost, cfg.Repetitions, cfg.Duration, cfg.Interval = cost, 2, 300*time.Millisecond, 100*time.Millisecond
			if tt.set != nil {
				tt.set(&cfg)
			}
			res := runOK(t, cfg)
			exitMs := float64(time.Now().UnixMilli())
			if len(res.Logs) == 0 {
				t.Fatal("result.json records no logs")
			}
			var worst float64
			for kind := range res.Logs {
				worst = max(worst, checkLogRates(t, res, kind, filepath.Join(cfg.Out, kind+".hlog"), exitMs))
			}
			t.Logf("%d logs of %d repetitions: the logs' rates within %.4f%% of ops_per_sec", len(res.Logs), len(res.Repetitions), 100*worst)
		})
	}
}

// checkLogRates holds kind's log, as HdrHistogram's JavaScript reader reads
// it, to result.json's repetitions (see TestHlogRatesHdrJS). A late line
// (a lagging thread's) shares the span of an interval already written:
// its count is added and its span counted once, as docs/design.md says.
// It returns the largest relative departure of a repetition's rate.
func checkLogRates(t *testing.T, res *results.Result, kind, path string, exitMs float64) (worst float64) {
	t.Helper()
	base, _ := strings.CutSuffix(kind, results.ResponseSuffix)
	type rep struct {
		count      int64
		lengthMs   float64
		starts     []float64
		start, end float64
	}
	var reps []*rep
	// One millisecond apart at least: the next repetition's workers
	// start after the last one's have exited. Within a repetition, the
	// intervals' times are the same microseconds, read as float ms.
	const touch = 0.01
	lines := strings.Split(strings.TrimSpace(hdrJS(t, "hlogus", path)), "\n")
	for i, ln := range lines {
		var start, end float64
		var n, mx int64
		if _, err := fmt.Sscan(ln, &start, &end, &n, &mx); err != nil {
			t.Fatalf("%s: JS reader line %q: %v", kind, ln, err)
		}
		if end < start {
			t.Errorf("%s: interval %d ends before it starts: %q", kind, i, ln)
		}
		if end > exitMs {
			t.Errorf("%s: interval %d ends %.3f ms after the run returned", kind, i, end-exitMs)
		}
		var r *rep
		if len(reps) > 0 {
			r = reps[len(reps)-1]
		}
		switch {
		case r != nil && slices.ContainsFunc(r.starts, func(s float64) bool { return math.Abs(s-start) < touch }) && start < r.end-touch:
			r.count += n // late: its interval's span is counted already
			continue
		case r != nil && math.Abs(start-r.end) < touch:
		case r != nil && start < r.end:
			t.Errorf("%s: interval %d starts at %.3f, %.3f ms before the previous one's end", kind, i, start, r.end-start)
		default:
			r = &rep{start: start}
			reps = append(reps, r)
		}
		r.count, r.lengthMs, r.end = r.count+n, r.lengthMs+end-start, end
		r.starts = append(r.starts, start)
	}
	if len(reps) != len(res.Repetitions) {
		t.Fatalf("%s: the log's intervals make %d stretches of time, result.json has %d repetitions:\n%s", kind, len(reps), len(res.Repetitions), strings.Join(lines, "\n"))
	}
	for i, r := range reps {
		want := res.Repetitions[i].Ops[base]
		if r.count != want.Count {
			t.Errorf("%s, repetition %d: the log holds %d operations, result.json %d", kind, i+1, r.count, want.Count)
		}
		if d := time.Duration(res.Repetitions[i].Duration); math.Abs(r.lengthMs*1e6-float64(d)) > 0.01*float64(d) {
			t.Errorf("%s, repetition %d: the intervals last %.3f ms in all, the repetition %v", kind, i+1, r.lengthMs, d)
		}
		rate := float64(r.count) / (r.lengthMs / 1000)
		if math.Abs(rate-want.OpsPerSec) > 0.01*want.OpsPerSec {
			t.Errorf("%s, repetition %d: the log's count over its lengths is %.1f ops/s, result.json's ops_per_sec %.1f", kind, i+1, rate, want.OpsPerSec)
		}
		if want.OpsPerSec > 0 {
			worst = max(worst, math.Abs(rate/want.OpsPerSec-1))
		}
	}
	return worst
}

// hlogMsgs is one thread's reports of intervals [0, n) of kinds, each
// holding latencies spread as a loop's are, encoded as a worker sends them.
func hlogMsgs(t testing.TB, kinds []string, n int) []*intervalMsg {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 25))
	e := hdrv2.NewEncoder(hdrLayout)
	counts := make([]int64, histCounts)
	var out []*intervalMsg
	for i := range n {
		m := &intervalMsg{Index: int64(i), Hists: map[string]string{}}
		for _, k := range kinds {
			clear(counts)
			for range 20_000 {
				counts[bucketIndex(uint64(rng.ExpFloat64()*3_000)+9_000, histCounts)]++
			}
			s, err := e.Encode(counts)
			if err != nil {
				t.Fatal(err)
			}
			m.Hists[k] = s
		}
		out = append(out, m)
	}
	return out
}

var hlogKinds = []string{"reg", "unreg", "reg" + results.ResponseSuffix, "unreg" + results.ResponseSuffix}

// hlogRig is a repetition's logs of hlogKinds for one thread, with n of
// its interval reports (of 1 s) and the repetition's start; closed at the
// end of the test.
func hlogRig(tb testing.TB, n int) (*hlogs, []*intervalMsg, uint64) {
	tb.Helper()
	l, err := newHlogs(testDir(tb, tb.TempDir()), "test-run", hlogKinds, time.Now(), time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.close() })
	l.startRep(1)
	msgs, base := hlogMsgs(tb, hlogKinds, n), verbs.Now()
	for i, m := range msgs {
		m.End = base + uint64(i+1)*uint64(time.Second)
	}
	msgs[0].Start = base
	return l, msgs, base
}

// The coordinator merges and writes an interval of four kinds without
// garbage to speak of once its arrays exist: it shares the machine with
// the measured threads, and with hdrhistogram-go's decoder and log writer
// (a histogram and a zlib writer per kind and interval) it allocated
// ~5 MB an interval and took 14-20 ms of CPU a second, in bursts that
// took a measured thread's CPU. Bytes allocated are counted, not time.
func TestHlogsIntervalGarbage(t *testing.T) {
	l, msgs, base := hlogRig(t, 40)
	for _, m := range msgs[:10] { // arrays, buffers and the file's buffer come into being
		if err := l.add(m); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, m := range msgs[10:] {
		if err := l.add(m); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / uint64(len(msgs)-10)
	t.Logf("%d bytes allocated per interval of %d kinds", per, len(hlogKinds))
	if per > 64<<10 {
		t.Errorf("%d bytes allocated per interval of %d kinds, want under 64 KiB", per, len(hlogKinds))
	}
	l.endRep(base, base+uint64(len(msgs))*uint64(time.Second))
	var n int64
	for _, k := range hlogKinds {
		n += l.totals[k].TotalCount()
	}
	if want := int64(len(msgs) * len(hlogKinds) * 20_000); n != want {
		t.Errorf("totals hold %d latencies, want %d", n, want)
	}
}

// BenchmarkHlogsInterval is the coordinator's work for one thread's
// interval of four kinds: decode, merge, total and write.
func BenchmarkHlogsInterval(b *testing.B) {
	l, msgs, base := hlogRig(b, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := *msgs[i%len(msgs)]
		m.Index, m.End = int64(i), base+uint64(i+1)*uint64(time.Second)
		if err := l.add(&m); err != nil {
			b.Fatal(err)
		}
	}
}

// An interval's line is the one hdrhistogram-go's log writer writes for
// the histogram of the same counts and times, byte for byte (times in
// whole ms, all that writer carries; ours carry microseconds).
func TestHlogLineAsLogWriter(t *testing.T) {
	dir := t.TempDir()
	start := time.UnixMilli(1_700_000_000_123)
	l, err := newHlogs(testDir(t, dir), "test-run", []string{"reg"}, start, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l.startRep(1)
	// CLOCK_MONOTONIC 1 s is 250 ms into the run.
	base := uint64(time.Second)
	l.monoWall = start.Add(250*time.Millisecond).UnixNano() - int64(base)
	counts := make([]int64, histCounts)
	for i, v := range []uint64{1, 999, 10_000, 10_007, 3_000_000, 1 << 45} {
		counts[bucketIndex(v, histCounts)] += int64(i + 1)
	}
	l.write("reg", counts, base+uint64(3*time.Second), base+uint64(3500*time.Millisecond))
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "reg.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	got := lines[len(lines)-1]

	var want strings.Builder
	w := hdrhistogram.NewHistogramLogWriter(&want)
	w.SetBaseTime(start.UnixMilli())
	h := histogramInto(results.NewHistogram(), counts)
	h.SetStartTimeMs(start.Add(3250 * time.Millisecond).UnixMilli())
	h.SetEndTimeMs(start.Add(3750 * time.Millisecond).UnixMilli())
	if err := w.OutputIntervalHistogram(h); err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSpace(want.String()) {
		t.Errorf("line\n%s\nwant hdrhistogram-go's\n%s", got, want.String())
	}
}

// The .hlog files get the mode of every other file of a run (0644),
// whatever the umask: at umask 000 os.Create made them 0666, writable by
// anyone, and at 077 0600, unreadable to the colleagues result.json is
// readable to.
func TestHlogsMode(t *testing.T) {
	for _, umask := range []int{0o000, 0o022, 0o077} {
		t.Run(fmt.Sprintf("umask %03o", umask), func(t *testing.T) {
			dir := t.TempDir()
			old := syscall.Umask(umask)
			l, err := newHlogs(testDir(t, dir), "test-run", []string{"reg", "unreg"}, time.Now(), time.Second)
			if err == nil {
				err = errors.Join(results.WriteIn(testDir(t, dir), resultstest.Minimal("test-run", "reg.hlog", "unreg.hlog")), l.close())
			}
			syscall.Umask(old)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"reg.hlog", "unreg.hlog", results.FileName} {
				st, err := os.Stat(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode() != 0o644 {
					t.Errorf("%s: mode %v, want -rw-r--r--", name, st.Mode())
				}
			}
		})
	}
}
