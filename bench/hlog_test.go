package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

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
// counted as late and kept in the totals, never written a second time.
func TestHlogsLateReport(t *testing.T) {
	dir := t.TempDir()
	l, err := newHlogs(dir, []string{"reg"}, time.Now(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l.startRep(2)
	base := verbs.Now()
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
		if err := l.add(ivMsg(t, s.thread, s.idx, s.n), base); err != nil {
			t.Fatal(err)
		}
		sum += int64(s.n)
	}
	l.endRep()
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
	var counts []int64
	starts := map[int64]bool{}
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if starts[h.StartTimeMs()] {
			t.Errorf("two intervals start at %d ms", h.StartTimeMs())
		}
		starts[h.StartTimeMs()] = true
		counts = append(counts, h.TotalCount())
	}
	want := []int64{1, 2, 4 + 200, 8 + 400, 16 + 800}
	if len(counts) != len(want) {
		t.Fatalf("intervals %v, want %v", counts, want)
	}
	for i := range want {
		if counts[i] != want[i] {
			t.Errorf("intervals %v, want %v", counts, want)
			break
		}
	}
}

// An interval whose histogram cannot be encoded is an error of the thread
// (so of the run), naming the kind and how many latencies it held; never
// dropped in silence.
func TestIntervalEncodeFailure(t *testing.T) {
	spec, err := workloads.Get("steady")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "domain")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sh, err := createShm(filepath.Join(dir, "barrier"), 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.close()
	qpns := []uint32{0x100, 0x101, 0x102, 0x103}
	cfg := &workerConfig{Threads: 1, TotalThreads: 1, QPs: 4, Verbs: verbs.Options{Provider: "null"},
		Domain: path, Held: qpns, Interval: time.Second}
	th := newThread(cfg, spec, 0, sh)
	if err := th.setup(); err != nil {
		t.Fatal(err)
	}
	defer th.teardown()
	var reported []*intervalMsg
	th.report = func(m *intervalMsg) { reported = append(reported, m) }
	encodeHistogram = func(*hdrhistogram.Histogram) (string, error) { return "", errors.New("no space in the encoder") }
	defer func() { encodeHistogram = results.EncodeHistogram }()

	th.measuring, th.ivNext = true, 0 // the first batch ends the interval
	err = th.loopPhase(th.phases[0])
	if err == nil || !strings.Contains(err.Error(), "encoding the reg latencies of interval 0 (4 operations)") ||
		!strings.Contains(err.Error(), "no space in the encoder") {
		t.Errorf("err = %v, want the encoding failure named", err)
	}
	if len(reported) != 0 {
		t.Errorf("reported %d interval(s) with a histogram missing", len(reported))
	}
}
