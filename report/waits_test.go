package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

// TestWaitsRow: the report says what share of the threads' working time
// went to the device's locks, its command queue and the run queue, and
// says when the run queue was not known.
func TestWaitsRow(t *testing.T) {
	share := 0.125
	for _, tc := range []struct {
		name  string
		waits *results.Waits
		want  string
	}{
		{"none", nil, ""},
		{"all known", &results.Waits{DeviceLockShare: 0.3, CommandQueueShare: 0.05, RunQueueShare: &share},
			"on the device's locks 30.0%, for its command queue 5.0%, on the run queue (runnable, not running) 12.5%"},
		{"no schedstat", &results.Waits{DeviceLockShare: 0.3},
			"on the device's locks 30.0%, for its command queue 0.0%, on the run queue (runnable, not running) not known (schedstat unreadable)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			for _, r := range coverageRows(results.Harness{Waits: tc.waits}) {
				if strings.HasPrefix(r.K, "waits") {
					got = r.V
				}
			}
			if got != tc.want {
				t.Errorf("waits row %q, want %q", got, tc.want)
			}
			// The summary says it too, where there is something to say.
			var md bytes.Buffer
			run := &Run{Dir: "d", Result: &results.Result{Harness: results.Harness{Waits: tc.waits}}}
			if err := WriteMarkdown(&md, []*Run{run}); err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(md.String(), "working time went "); has != (tc.want != "") ||
				(tc.want != "" && !strings.Contains(md.String(), tc.want)) {
				t.Errorf("summary.md says the waits %v, want %q:\n%s", has, tc.want, md.String())
			}
		})
	}
}
