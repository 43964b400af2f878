package bench

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// A reg that succeeds where the phase expects a failure is dropped again;
// when that drop fails too, the outcome says the registration was kept,
// instead of a silent leak.
func TestUnexpectedSuccessDrop(t *testing.T) {
	defer func(f func(*verbs.Domain, uint32) error) { dropUnexpected = f }(dropUnexpected)
	for _, tt := range []struct {
		name string
		drop error
		want string
	}{
		{"dropped", nil, errUnexpectedSuccess},
		{"drop fails", syscall.EIO, errUnexpectedSuccessKept},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// null: every reg succeeds, so each is unexpected where EINVAL is due.
			th := nullThread(t, "errors", 4, func(c *workerConfig) { c.Invalid, c.Foreign = c.Held[:3], nil })
			drops := 0
			dropUnexpected = func(*verbs.Domain, uint32) error { drops++; return tt.drop }
			th.buildLoop()
			if _, failed, err := th.runSteps(0, 3); err != nil || !failed {
				t.Fatalf("failed %v, %v; want the unexpected successes seen", failed, err)
			}
			rec := th.phases[0].rec
			if drops != 3 || rec.errors != 3 || rec.errnos[tt.want] != 3 || len(rec.errnos) != 1 {
				t.Errorf("drops %d, errors %d, outcomes %v; want 3 drops and 3 %s", drops, rec.errors, rec.errnos, tt.want)
			}
		})
	}
}

// nullThread sets up one benchmark thread of workload w on the null
// provider, alone in its run, holding qps QP numbers from 0x100; edit, if
// not nil, adjusts the worker configuration first. The thread and its
// barrier are released when the test ends.
func nullThread(t *testing.T, w string, qps int, edit func(*workerConfig)) *thread {
	t.Helper()
	spec, err := workloads.Get(w)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "domain")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sh, err := createShm(filepath.Join(dir, "barrier"), 1, qps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.close() })
	qpns := make([]uint32, qps)
	for i := range qpns {
		qpns[i] = uint32(0x100 + i)
	}
	cfg := &workerConfig{Threads: 1, TotalThreads: 1, QPs: qps, Verbs: verbs.Options{Provider: "null"},
		Domain: path, Held: qpns, Interval: time.Second}
	if edit != nil {
		edit(cfg)
	}
	th := newThread(cfg, spec, 0, sh)
	if err := th.setup(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { th.teardown() })
	return th
}
