package verbs

import (
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// simRanks opens n registrants of one sim device and one domain, the
// device's QP state (OpModify's target) state.
func simRanks(t *testing.T, n int, state QPState) []*Domain {
	t.Helper()
	dir := t.TempDir()
	var doms []*Domain
	for range n {
		dev, err := Open(Options{Provider: "sim", QPState: state, Sim: SimOptions{Dir: filepath.Join(dir, "sim")}})
		if err != nil {
			t.Fatal(err)
		}
		dom, err := dev.OpenDomain(filepath.Join(dir, "domain"), true)
		if err != nil {
			t.Fatal(err)
		}
		doms = append(doms, dom)
		t.Cleanup(func() {
			dom.Close()
			dev.Close()
		})
	}
	return doms
}

// runRanks runs each rank's storm on its own locked thread, all at once,
// and fails the test unless every one is done.
func runRanks(t *testing.T, d []*Domain, ps []*Program, ss []*Storm, stop *uint32) {
	t.Helper()
	guard := time.AfterFunc(20*time.Second, func() { atomic.StoreUint32(stop, 1) })
	defer guard.Stop()
	var wg sync.WaitGroup
	out, errs := make([]StormOutcome, len(d)), make([]error, len(d))
	for r := range d {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			out[r], errs[r] = d[r].RunStorm(ps[r], ss[r])
		}()
	}
	wg.Wait()
	for r := range d {
		if errs[r] != nil || out[r] != StormDone {
			t.Fatalf("rank %d: %v, %v (errnos %v); want done", r, out[r], errs[r], ss[r].Status)
		}
	}
}

// Elections (OpElect, GASNet's compare-and-swap): ranks that all elect on
// the same slots in the same order, at the same start, race on every
// slot; however it goes, each slot has exactly one creator, whose number
// is in the table, and every other rank registered with that number.
// Repeated, so that the race is run many times.
func TestStormElect(t *testing.T) {
	tests := []struct {
		name         string
		ranks, slots int
		rounds       int
	}{
		{"2 ranks", 2, 16, 20},
		{"4 ranks", 4, 8, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := simRanks(t, tt.ranks, QPReset)
			contested := 0
			for round := range tt.rounds {
				table := make([]uint32, tt.slots)
				var stop, abort uint32
				ps, ss := make([]*Program, tt.ranks), make([]*Storm, tt.ranks)
				begin := Now() + uint64(2*time.Millisecond)
				for r := range tt.ranks {
					ps[r] = NewProgram(tt.slots, false)
					ss[r] = NewStorm(ps[r], table, &stop, &abort, begin)
					for k := range tt.slots {
						ps[r].Steps[k] = Step{Op: uint8(OpElect)}
						ss[r].Slot[k] = uint32(k + 1)
					}
				}
				runRanks(t, d, ps, ss, &stop)
				winners := map[int]bool{}
				for k := range tt.slots {
					creators := 0
					for r := range tt.ranks {
						st := ps[r].Steps[k]
						switch Op(st.Op) {
						case OpCreate:
							creators++
							winners[r] = true
						case OpReg:
						default:
							t.Fatalf("round %d, rank %d, slot %d: step ran as %v", round, r, k, Op(st.Op))
						}
						if st.QPN != table[k] || ss[r].Errno(k) != 0 {
							t.Errorf("round %d, rank %d, slot %d: %v of %#x (errno %v), table %#x", round, r, k, Op(st.Op), st.QPN, ss[r].Errno(k), table[k])
						}
					}
					if creators != 1 {
						t.Errorf("round %d, slot %d: %d creators, want 1", round, k, creators)
					}
				}
				if len(winners) > 1 {
					contested++
				}
				for r := range tt.ranks {
					for k := range tt.slots {
						if _, err := d[r].Unreg(ps[r].Steps[k].QPN); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			t.Logf("%d of %d rounds had more than one winning rank", contested, tt.rounds)
		})
	}
}

// A modify on the QP of an election (Back 1) waits for it: while another
// rank's claim keeps the slot, the election is skipped, and so is its
// modify, which would otherwise run first on no QP (EINVAL). Then the
// winner's number comes, the election registers with it and the modify
// moves that QP.
func TestStormElectModifyWaits(t *testing.T) {
	d := simRanks(t, 2, QPInit)
	q, err := d[1].CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	table := []uint32{0xffffffff} // claimed: XB_SLOT_CLAIMED
	var stop, abort uint32
	p := NewProgram(2, false)
	p.Steps[0], p.Steps[1] = Step{Op: uint8(OpElect)}, Step{Op: uint8(OpModify), Back: 1}
	s := NewStorm(p, table, &stop, &abort, Now())
	s.Slot[0] = 1
	// The winner sends its number back later.
	go func() {
		time.Sleep(20 * time.Millisecond)
		atomic.StoreUint32(&table[0], q)
	}()
	runRanks(t, d[:1], []*Program{p}, []*Storm{s}, &stop)
	if Op(p.Steps[0].Op) != OpReg || p.Steps[0].QPN != q || s.Errno(0) != 0 || s.Errno(1) != 0 {
		t.Errorf("election ran as %v of %#x (errno %v), modify errno %v; want a reg of %#x, then its modify", Op(p.Steps[0].Op), p.Steps[0].QPN, s.Errno(0), s.Errno(1), q)
	}
	if s.IdleNS() == 0 {
		t.Error("no idle time while the slot was claimed")
	}
	for _, r := range []int{0, 1} {
		if _, err := d[r].Unreg(q); err != nil {
			t.Error(err)
		}
	}
}
