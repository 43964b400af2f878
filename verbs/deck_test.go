//go:build cgo

package verbs

import (
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// Go's names for a deck's words and states are xb.h's numbers.
func TestDeckLayout(t *testing.T) {
	want := []int{DeckCur, DeckNext, DeckLen, DeckStart, DeckSeq, DeckBegun, DeckSets, DeckWords,
		DeckState, DeckIndex, DeckEnd, DeckOrder, DeckFree, DeckCounting, DeckEnded}
	if got := cDeckLayout(); !slices.Equal(got, want) {
		t.Fatalf("xb.h numbers a deck %v, Go %v", got, want)
	}
}

// A ring with a deck stays in C across interval ends: one call of 60 ms at
// 10 ms intervals ends about five sets (a reader frees each as the flusher
// would), each at or after its interval's end and in order, its counts
// those of the steps run in it; what the call ran is all in the sets, the
// one still counting included. With no set free, the ring goes on in the
// one it has: nothing is lost, the interval lasts longer.
func TestRepeatProgramDeck(t *testing.T) {
	d := simPair(t, SimOptions{}, 2)
	q, err := d[0].CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	const buckets = 4096
	for _, tt := range []struct {
		name    string
		reader  bool // a reader frees the ended sets
		minEnds int
	}{{"a reader frees the sets", true, 4}, {"no reader: two ends, then one long interval", false, 2}} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewProgram(2, false)
			p.Rec = Recording{Buckets: buckets, Service: make([]int64, 2*buckets), Count: make([]uint64, 2), SumNS: make([]uint64, 2)}
			p.Steps[0] = Step{QPN: q, Op: uint8(OpReg), Tag: 0}
			p.Steps[1] = Step{QPN: q, Op: uint8(OpUnreg), Tag: 1}
			start := Now()
			deck := NewDeck(3, 2*buckets, start, 10*time.Millisecond)
			var ended []uint64 // per ended set, in order: its index, end and count
			var total int64
			stop := make(chan struct{})
			done := make(chan struct{})
			take := func() bool {
				took := false
				for {
					k := -1
					for i := range deck.Sets() {
						if atomic.LoadUint64(deck.Word(i, DeckState)) == DeckEnded && (k < 0 || *deck.Word(i, DeckOrder) < *deck.Word(k, DeckOrder)) {
							k = i
						}
					}
					if k < 0 {
						return took
					}
					var n int64
					for _, c := range deck.Set(k) {
						n += c
					}
					ended = append(ended, *deck.Word(k, DeckIndex), *deck.Word(k, DeckEnd), uint64(n))
					total += n
					clear(deck.Set(k))
					atomic.StoreUint64(deck.Word(k, DeckState), DeckFree)
					took = true
				}
			}
			go func() {
				defer close(done)
				for tt.reader {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
						take()
					}
				}
			}()
			rep := Repeat{Until: start + uint64(60*time.Millisecond), Poll: 100 * time.Microsecond, Deck: deck}
			var st ProgramStats
			// The call's thread's time on the run queue: a thread kept off
			// its CPU across interval ends ends one set for them (make
			// test's other packages once left one set in the 60 ms).
			runtime.LockOSThread()
			q0, qerr := threadRunQueue()
			if err := d[1].RepeatProgram(p, 0, 2, &rep, &st); err != nil {
				t.Fatal(err)
			}
			q1, _ := threadRunQueue()
			runtime.UnlockOSThread()
			close(stop)
			<-done
			take()
			cur := int(deck.Ctl[DeckCur])
			for _, c := range deck.Set(cur) {
				total += c
			}
			switch n := len(ended) / 3; {
			case n < tt.minEnds && qerr == nil && q1-q0 >= 10*time.Millisecond:
				t.Logf("%d sets ended in a 60 ms call at 10 ms intervals, fewer than %d: the call's thread waited %v on the run queue, the machine's doing; not judged", n, tt.minEnds, q1-q0)
			case n < tt.minEnds || n > 6:
				t.Errorf("%d sets ended in a 60 ms call at 10 ms intervals, want %d to 6 (%v on the run queue)", n, tt.minEnds, q1-q0)
			}
			for i := 0; i+2 < len(ended); i += 3 {
				index, end := ended[i], ended[i+1]
				if planned := start + (index+1)*uint64(10*time.Millisecond); end < planned {
					t.Errorf("set %d (interval %d) ended at %d, before its interval's end %d", i/3, index, end, planned)
				}
				if i > 0 && (index <= ended[i-3] || end <= ended[i-2]) {
					t.Errorf("set %d: interval %d ending at %d after interval %d ending at %d", i/3, index, end, ended[i-3], ended[i-2])
				}
			}
			if ran := int64(p.Rec.Count[0] + p.Rec.Count[1]); total != ran || ran != int64(rep.Steps) || ran == 0 {
				t.Errorf("the sets hold %d latencies; the call ran %d steps, counted %d", total, rep.Steps, ran)
			}
			if slices.ContainsFunc(p.Rec.Service, func(c int64) bool { return c != 0 }) {
				t.Errorf("the program's own arrays were counted in, with a deck")
			}
			if prev := (rep.Pos + 1) % 2; p.Steps[prev].Op == uint8(OpReg) {
				if _, err := d[1].Unreg(q); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
