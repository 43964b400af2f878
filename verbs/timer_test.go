package verbs

import (
	"math"
	"runtime"
	"testing"
)

// TestNowIsTheCClock: Now, read in Go, agrees with the clock C reads, to
// well under a microsecond, and costs no cgo call.
func TestNowIsTheCClock(t *testing.T) {
	for range 100 {
		c1 := nowNS()
		g := Now()
		c2 := nowNS()
		if g+1000 < c1 || g > c2+1000 {
			t.Fatalf("Now() = %d outside the C readings [%d, %d] ± 1us", g, c1, c2)
		}
	}
	calls := runtime.NumCgoCall()
	for range 1000 {
		Now()
	}
	if n := runtime.NumCgoCall() - calls; n != 0 {
		t.Errorf("1000 calls of Now made %d cgo calls, want 0", n)
	}
}

// TestTimerOverheadKeepsFraction: the overhead is total time over a
// thousand reads, so it has a fraction; truncated to whole ns it was off
// by up to a few percent of a 20-40 ns read. Over five measurements at
// least one must have a fractional part (a whole-ns result has odds of
// about one in a thousand each).
func TestTimerOverheadKeepsFraction(t *testing.T) {
	var got []float64
	for range 5 {
		v := TimerOverheadNS()
		if v <= 0 || v > 1e5 {
			t.Fatalf("TimerOverheadNS() = %v, want a positive read cost", v)
		}
		if v != math.Trunc(v) {
			return
		}
		got = append(got, v)
	}
	t.Errorf("TimerOverheadNS() gave only whole nanoseconds: %v", got)
}

// TestBareOpLoop: the floor counts every chained read once,
// in the bucket the hot loop would (HistogramIndex), and its durations add
// up to the time between its first and last read: within the call.
func TestBareOpLoop(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, nb    int
		appended int // calls on the same floor
	}{
		{"one read", 1, 2048, 1},
		{"a batch", 4096, 2048, 1},
		{"values past the top land in the last bucket", 4096, 16, 1},
		{"calls add up", 1000, 2048, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewOpFloor(tc.nb)
			var wall uint64
			for range tc.appended {
				t0 := nowNS()
				BareOpLoop(f, tc.n)
				wall += nowNS() - t0
			}
			want := uint64(tc.n * tc.appended)
			if f.Count != want {
				t.Errorf("count %d, want %d", f.Count, want)
			}
			var inBuckets int64
			for _, c := range f.Counts {
				inBuckets += c
			}
			if uint64(inBuckets) != want {
				t.Errorf("buckets hold %d, want %d", inBuckets, want)
			}
			if f.Sum > wall {
				t.Errorf("durations sum to %d ns, more than the %d ns the calls took", f.Sum, wall)
			}
			if tc.nb < 2048 && f.Counts[tc.nb-1] == 0 && f.Sum > 0 {
				t.Errorf("no duration in the last of %d buckets: %v", tc.nb, f.Counts)
			}
		})
	}
	// The bucket is the hot loop's: a floor of one bucket per ns up to
	// 2048 puts a duration d at index d.
	f := NewOpFloor(2048)
	BareOpLoop(f, 1)
	for i, c := range f.Counts {
		if c == 1 && uint64(i) != f.Sum && f.Sum < 2048 {
			t.Errorf("one read of %d ns counted at index %d", f.Sum, i)
		}
	}
}
