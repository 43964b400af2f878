package verbs

import (
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"
)

// benchBatch is the batch size of these benchmarks, the engine's default
// program length (bench.DefaultBatchOps).
const benchBatch = 4096

// BenchmarkNullRunBatch: the hot path on the provider that does nothing.
// Target: per-op latency ≤ 1.5× one timer read measured in the same run,
// and ≤ 1/1000 cgo calls per op.
func BenchmarkNullRunBatch(b *testing.B) {
	dev, err := Open(Options{Provider: "null"})
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Close()
	dom, err := dev.OpenDomain(filepath.Join(b.TempDir(), "d"), true)
	if err != nil {
		b.Fatal(err)
	}
	defer dom.Close()
	batch := NewBatch(benchBatch)
	timer := TimerOverheadNS()
	var sum uint64
	calls0 := runtime.NumCgoCall()
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += benchBatch {
		n := min(benchBatch, b.N-done)
		if _, err := dom.RunBatch(OpReg, batch, n); err != nil {
			b.Fatal(err)
		}
		for _, ns := range batch.NS[:n] {
			sum += ns
		}
	}
	b.StopTimer()
	calls := runtime.NumCgoCall() - calls0
	perOp := float64(sum) / float64(b.N)
	b.ReportMetric(perOp, "reported-ns/op")
	b.ReportMetric(timer, "timer-ns")
	b.ReportMetric(perOp/timer, "reported/timer")
	b.ReportMetric(float64(calls)/float64(b.N), "cgo-calls/op")
}

// BenchmarkSimRegUnreg: an uncontended reg+unreg pair on the sim device,
// without a cost model, as the batch loop times it. Target ≤ 250 ns.
func BenchmarkSimRegUnreg(b *testing.B) {
	dir := b.TempDir()
	open := func() *Domain {
		dev, err := Open(Options{Provider: "sim", Sim: SimOptions{Dir: filepath.Join(dir, "sim")}})
		if err != nil {
			b.Fatal(err)
		}
		dom, err := dev.OpenDomain(filepath.Join(dir, "d"), true)
		if err != nil {
			b.Fatal(err)
		}
		return dom
	}
	holder, user := open(), open()
	batch := NewBatch(1024)
	if failed, err := holder.RunBatch(OpCreate, batch, 1024); err != nil || failed != 0 {
		b.Fatal(failed, err)
	}
	var sum uint64
	b.ResetTimer()
	for done := 0; done < b.N; done += 1024 {
		n := min(1024, b.N-done)
		for _, op := range []Op{OpReg, OpUnreg} {
			if failed, err := user.RunBatch(op, batch, n); err != nil || failed != 0 {
				b.Fatalf("%v: %d failed, %v", op, failed, err)
			}
			for _, ns := range batch.NS[:n] {
				sum += ns
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(sum)/float64(b.N), "pair-ns")
}

// BenchmarkSimDestroyCost: with destroy=100us the last unreg's p50 must be
// within +5% of 100 µs: the cost model reports what it was told.
func BenchmarkSimDestroyCost(b *testing.B) {
	const destroy = 100 * time.Microsecond
	dir := b.TempDir()
	dev, err := Open(Options{Provider: "sim", Sim: SimOptions{Dir: filepath.Join(dir, "sim"), Cost: Cost{Destroy: destroy}}})
	if err != nil {
		b.Fatal(err)
	}
	dom, err := dev.OpenDomain(filepath.Join(dir, "d"), true)
	if err != nil {
		b.Fatal(err)
	}
	batch := NewBatch(256)
	var lat []uint64
	b.ResetTimer()
	for done := 0; done < b.N; done += 256 {
		n := min(256, b.N-done)
		if failed, _ := dom.RunBatch(OpCreate, batch, n); failed != 0 {
			b.Fatal("create failed")
		}
		if failed, _ := dom.RunBatch(OpUnreg, batch, n); failed != 0 {
			b.Fatal("unreg failed")
		}
		for i := 0; i < n; i++ {
			if batch.Destroyed(i) != WasDestroyed {
				b.Fatal("the creator's unreg did not destroy the QP")
			}
			lat = append(lat, batch.NS[i])
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p50 := float64(lat[len(lat)/2])
	b.ReportMetric(p50, "unreg_last-p50-ns")
	b.ReportMetric((p50/float64(destroy)-1)*100, "p50-over-cost-%")
}
