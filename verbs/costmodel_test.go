package verbs

import (
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// TestSimCostModelAccuracy holds the sim cost model to what the README
// and calibrate claim, in make test: each op kind's reported p50 is its
// configured cost. The busy-wait cannot end early, so the lower bound is
// the cost itself (less 2% for clock granularity); the upper bound, +50%,
// is loose for a shared 2-core machine yet fails a model that pays a cost
// twice or at the wrong op (2x) or not at all.
func TestSimCostModelAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: busy-waits about 60 ms")
	}
	cost := Cost{Create: 40 * time.Microsecond, Reg: 20 * time.Microsecond, Unreg: 10 * time.Microsecond,
		Destroy: 100 * time.Microsecond}
	dir := t.TempDir()
	open := func() *Domain {
		dev, err := Open(Options{Provider: "sim", Sim: SimOptions{Dir: filepath.Join(dir, "dev"), Cost: cost}})
		if err != nil {
			t.Fatal(err)
		}
		dom, err := dev.OpenDomain(filepath.Join(dir, "dom"), true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dom.Close(); dev.Close() })
		return dom
	}
	creator, other := open(), open()
	const n = 300
	b := NewBatch(n)
	p50 := func(d *Domain, op Op) time.Duration {
		t.Helper()
		if failed, err := d.RunBatch(op, b, n); err != nil || failed != 0 {
			t.Fatalf("%v batch: %d failed, %v", op, failed, err)
		}
		ns := append([]uint64(nil), b.NS[:n]...)
		sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
		return time.Duration(ns[n/2])
	}
	got := []struct {
		what      string
		p50, want time.Duration
	}{
		{"create", p50(creator, OpCreate), cost.Create},
		{"reg", p50(other, OpReg), cost.Reg},
		{"unreg (not the last)", p50(other, OpUnreg), cost.Unreg},
		{"last unreg (destroys)", p50(creator, OpUnreg), cost.Unreg + cost.Destroy},
	}
	for _, g := range got {
		lo, hi := g.want*98/100, g.want*150/100
		t.Logf("%s: p50 %v, configured %v", g.what, g.p50, g.want)
		if g.p50 < lo || g.p50 > hi {
			t.Errorf("%s: p50 %v, want %v within [%v, %v]", g.what, g.p50, g.want, lo, hi)
		}
	}
}
