package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// An open loop's summary puts each kind's response times under its service
// times, says what became of the schedule, and names a saturated run; a
// closed loop's summary has none of it.
func TestOpenLoopMarkdown(t *testing.T) {
	lat := func(p50 int64) results.Latency {
		return results.Latency{P50: p50, P90: 2 * p50, P99: 3 * p50, P999: 4 * p50, Max: 5 * p50}
	}
	resp := lat(20_000)
	r := &results.Result{Ops: map[string]results.OpStats{"reg": {Count: 10, NS: lat(10_000), ResponseNS: &resp}},
		OpenLoop: &results.OpenLoop{Arrival: "poisson", RequestedOpsPerSec: 25000, AchievedOpsPerSec: 12000, Saturated: true,
			BacklogEndNS: 3_000_000, BacklogMaxNS: 4_000_000, Waits: 7, WakeLateMeanNS: 1500, WakeLateMaxNS: 9000}}
	run := &Run{Result: r, Kinds: []string{"reg"}}
	var b strings.Builder
	writeOpenLoop(&b, run)
	got := b.String()
	for _, want := range []string{"poisson arrivals", "25.0k/s requested", "12.0k/s achieved", "**saturated**",
		"backlog at the end 3.00ms (at most 4.00ms)", "7 waits", "| reg | service | 10.0µs | 20.0µs | 30.0µs | 40.0µs | 50.0µs |",
		"| reg | response | 20.0µs | 40.0µs | 60.0µs | 80.0µs | 100µs |"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	r.OpenLoop = nil
	b.Reset()
	writeOpenLoop(&b, run)
	if b.Len() != 0 {
		t.Errorf("a closed loop's summary says %q", b.String())
	}
	if m, ok := MetricByName("response_p99"); !ok || m.Get(r.Ops["reg"]) != 60_000 {
		t.Errorf("metric response_p99 = %v, want 60µs", m.Get(r.Ops["reg"]))
	}
}

// report.html of an open-loop run folder the engine wrote
// (testdata/runs/engine-openloop*, README) leads its headline with the
// open loop's verdict (the requested and achieved rates, kept up or
// saturated), then each kind's response time before its service time,
// and has the response table summary.md has; a saturated run once
// headlined its 10 µs service time beside a response p50 of 282 ms.
func TestOpenLoopHTML(t *testing.T) {
	for _, tt := range []struct {
		dir, verdict string
		saturated    bool
	}{
		{"engine-openloop", "achieved: it kept up (no thread more than 10.0ms behind its schedule for over", false},
		{"engine-openloop-saturated", "achieved: saturated, it did not keep up (a thread was more than 10.0ms behind its schedule for", true},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			src := filepath.Join("testdata", "runs", tt.dir)
			run, err := LoadRun(src)
			if err != nil {
				t.Fatal(err)
			}
			ol := run.Result.OpenLoop
			if ol == nil || ol.Saturated != tt.saturated {
				t.Fatalf("open_loop %+v: want saturated %v (the fixture is not what this test needs)", ol, tt.saturated)
			}
			dir := copyRun(t, src)
			if _, err := Generate([]string{dir}, ""); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, HTMLFile))
			if err != nil {
				t.Fatal(err)
			}
			page := string(data)
			hs := headlineSection(page)
			items := regexp.MustCompile(`<li>(.*?)</li>`).FindAllStringSubmatch(hs, -1)
			if len(items) != 3 {
				t.Fatalf("headline items %q, want the open loop's verdict and reg, unreg", items)
			}
			verdict := fmt.Sprintf("Open loop at %s requested (%s arrivals), %s achieved", units.FormatRate(ol.RequestedOpsPerSec), ol.Arrival, units.FormatRate(ol.AchievedOpsPerSec))
			if v := items[0][1]; !strings.HasPrefix(v, verdict) || !strings.Contains(v, tt.verdict) {
				t.Errorf("headline opens with %q, want %q ... %q", v, verdict, tt.verdict)
			}
			for i, kind := range []string{"reg", "unreg"} {
				s := run.Result.Ops[kind]
				want := fmt.Sprintf("%s: response p50 %s, p99 %s; service p50 %s, p99 %s", kind,
					units.FormatNS(float64(s.ResponseNS.P50)), units.FormatNS(float64(s.ResponseNS.P99)), units.FormatNS(float64(s.NS.P50)), units.FormatNS(float64(s.NS.P99)))
				if !strings.HasPrefix(items[i+1][1], htmlEscape(want)) {
					t.Errorf("headline says %q, want %q first", items[i+1][1], want)
				}
			}
			checkHeadline(t, page, []*Run{run}, false)
			for _, want := range []string{"<h3>Open loop: response and service times</h3>",
				fmt.Sprintf("<tr><td>reg</td><td>response</td><td class=\"n\">%s</td>", units.FormatNS(float64(run.Result.Ops["reg"].ResponseNS.P50))),
				fmt.Sprintf("<tr><td>unreg</td><td>service</td><td class=\"n\">%s</td>", units.FormatNS(float64(run.Result.Ops["unreg"].NS.P50))),
				htmlEscape(openLoopSchedule(ol))} {
				if !strings.Contains(page, want) {
					t.Errorf("report.html lacks %q", want)
				}
			}
			if got := strings.Contains(page, `<b class="status-failed">saturated</b>`); got != tt.saturated {
				t.Errorf("the open loop's table marks it saturated: %v, want %v", got, tt.saturated)
			}
			var md bytes.Buffer
			if err := WriteMarkdown(&md, []*Run{run}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.dir+".summary.md", md.Bytes())
		})
	}
}

// A closed loop's headline and page say nothing of response times.
func TestClosedLoopHeadline(t *testing.T) {
	run := loadFixture(t, lifecycleFixture())
	for _, k := range newHeadline(run).Kinds {
		if strings.Contains(k, "response") || strings.Contains(k, "Open loop") {
			t.Errorf("a closed loop's headline says %q", k)
		}
	}
}

// The schedule's line says how the threads waited, when the run recorded
// it (results from before open_loop.wait say nothing of it).
func TestOpenLoopScheduleSaysWait(t *testing.T) {
	for _, tt := range []struct{ wait, want string }{
		{"spin", "12 waits for an intended start (spinning), woken"},
		{"sleep", "12 waits for an intended start (sleeping when far), woken"},
		{"", "12 waits for an intended start, woken"},
	} {
		ol := &results.OpenLoop{Wait: tt.wait, Waits: 12, WakeLateMeanNS: 150, WakeLateMaxNS: 900}
		if got := openLoopSchedule(ol); !strings.Contains(got, tt.want) {
			t.Errorf("wait %q: %q, want %q in it", tt.wait, got, tt.want)
		}
	}
}
