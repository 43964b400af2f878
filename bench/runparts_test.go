package bench

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/runfolder"
	"github.com/xrcbench/xrcbench/results"
)

// The run's error keeps its first failure first, and lets none fall.
func TestAlsoFailed(t *testing.T) {
	first, later := errors.New("repetition 1: worker 0 failed"), errors.New("writing the interval logs")
	for _, tc := range []struct {
		name       string
		runErr     error
		err        error
		want       string
		wraps      []error
		wantNilErr bool
	}{
		{"neither", nil, nil, "", nil, true},
		{"first only", first, nil, first.Error(), []error{first}, false},
		{"later only", nil, later, later.Error(), []error{later}, false},
		{"both", first, later, first.Error() + "; " + later.Error(), []error{first, later}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := alsoFailed(tc.runErr, tc.err)
			if tc.wantNilErr {
				if got != nil {
					t.Fatalf("alsoFailed = %v, want nil", got)
				}
				return
			}
			if got == nil || got.Error() != tc.want {
				t.Fatalf("alsoFailed = %v, want %q", got, tc.want)
			}
			for _, w := range tc.wraps {
				if !errors.Is(got, w) {
					t.Errorf("%v does not wrap %v", got, w)
				}
			}
		})
	}
}

// Operations with an unexpected outcome fail the run, named by kind in
// results order with their errnos sorted.
func TestUnexpectedOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  map[string]results.OpStats
		want string // "" for none
	}{
		{"none", nil, ""},
		{"all as expected", map[string]results.OpStats{results.OpReg: {Count: 10}}, ""},
		{"one kind", map[string]results.OpStats{results.OpReg: {Count: 10, Errors: 2, ErrnoCounts: map[string]int64{"EINVAL": 2}}},
			"operations with an unexpected outcome: reg 2 of 10 (EINVAL x2)"},
		{"kinds in results order, errnos sorted", map[string]results.OpStats{
			results.OpUnreg:  {Count: 5, Errors: 3, ErrnoCounts: map[string]int64{"ENOENT": 1, "EBUSY": 2}},
			results.OpCreate: {Count: 4, Errors: 1, ErrnoCounts: map[string]int64{"ENOMEM": 1}},
		}, "operations with an unexpected outcome: create 1 of 4 (ENOMEM x1); unreg 3 of 5 (EBUSY x2, ENOENT x1)"},
		{"a kind not measured by name", map[string]results.OpStats{"bogus": {Count: 1, Errors: 1}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := unexpectedOutcomes(tc.ops)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpectedOutcomes = %v, want none", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("unexpectedOutcomes = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// A failed run that measured something is partial; one that measured
// nothing failed.
func TestRunStatus(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		err      error
		measured int
		status   string
		msg      string
	}{
		{nil, 3, results.StatusOK, ""},
		{nil, 0, results.StatusOK, ""},
		{boom, 1, results.StatusPartial, "boom"},
		{boom, 0, results.StatusFailed, "boom"},
	} {
		t.Run(fmt.Sprintf("%v/%d", tc.err, tc.measured), func(t *testing.T) {
			status, msg := runStatus(tc.err, tc.measured)
			if status != tc.status || msg != tc.msg {
				t.Errorf("runStatus = %q, %q; want %q, %q", status, msg, tc.status, tc.msg)
			}
		})
	}
}

// The warnings about what the figures mean, each for its own cause.
func TestResultWarnings(t *testing.T) {
	sim := Config{Provider: "sim", Duration: 20 * time.Second, Warmup: 10 * time.Second}
	short := Config{Provider: "sim", Duration: 10 * time.Second}
	memory := &runfolder.PrivDir{Parent: "/dev/shm", OnMemory: true}
	disk := &runfolder.PrivDir{Parent: "/var/tmp", OnMemory: false}
	plain := func() *results.Result { return &results.Result{Environment: results.Environment{Version: "v1"}} }
	for _, tc := range []struct {
		name string
		res  *results.Result
		cfg  Config
		priv *runfolder.PrivDir
		want []string // a substring of each warning, in order
		kind []string // and its kind
	}{
		{"none", plain(), sim, memory, nil, nil},
		{"test double", &results.Result{Environment: results.Environment{Version: "v1",
			Device: &results.Device{Name: "xbfake0", TestDouble: true}, ProviderDetail: map[string]string{"libibverbs": "fakeverbs 34"}}},
			Config{Provider: "rdma"}, memory, []string{"test double (fakeverbs 34)"}, []string{results.WarnTestDouble}},
		{"sim on disk, long run", plain(), sim, disk, []string{"disk file system (/var/tmp)"}, []string{results.WarnSimOnDisk}},
		{"sim on disk, short run", plain(), short, disk, nil, nil},
		{"unknown version", &results.Result{Environment: results.Environment{Version: "unknown"}}, sim, memory, []string{"version unknown"}, []string{results.WarnVersionUnknown}},
		{"leaks", &results.Result{Environment: results.Environment{Version: "v1"}, Leaks: &results.LeakCheck{Leaked: []uint32{5, 9}}},
			sim, memory, []string{"2 QP(s) outlived the run: [5 9]"}, []string{results.WarnLeak}},
		{"all, in order", &results.Result{Environment: results.Environment{Version: "unknown"}, Leaks: &results.LeakCheck{Leaked: []uint32{5}}},
			sim, disk, []string{"disk file system", "version unknown", "1 QP(s) outlived"}, []string{results.WarnSimOnDisk, results.WarnVersionUnknown, results.WarnLeak}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resultWarnings(tc.res, &tc.cfg, tc.priv)
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d: %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i].Text, w) || got[i].Kind != tc.kind[i] {
					t.Errorf("warning %d = %+v, want kind %s and it to contain %q", i, got[i], tc.kind[i], w)
				}
			}
		})
	}
}
