package verbs

import (
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
