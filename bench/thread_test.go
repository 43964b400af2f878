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
	spec, err := workloads.Get("errors")
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
	// null: every reg succeeds, so each is unexpected where EINVAL is due.
	cfg := &workerConfig{Threads: 1, TotalThreads: 1, QPs: 4, Verbs: verbs.Options{Provider: "null"},
		Domain: path, Held: []uint32{0x100, 0x101, 0x102, 0x103}, Interval: time.Second}
	th := newThread(cfg, spec, 0, sh)
	if err := th.setup(); err != nil {
		t.Fatal(err)
	}
	defer th.teardown()
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
			drops := 0
			dropUnexpected = func(*verbs.Domain, uint32) error { drops++; return tt.drop }
			rec := &kindRec{kind: "reg", errnos: map[string]int64{}}
			p := &phaseRT{op: verbs.OpReg, rec: rec, expect: syscall.EINVAL}
			if _, err := th.dom.RunBatch(verbs.OpReg, th.batch, 3); err != nil {
				t.Fatal(err)
			}
			th.check(p, 3)
			if drops != 3 || rec.errors != 3 || rec.errnos[tt.want] != 3 || len(rec.errnos) != 1 {
				t.Errorf("drops %d, errors %d, outcomes %v; want 3 drops and 3 %s", drops, rec.errors, rec.errnos, tt.want)
			}
		})
	}
}
