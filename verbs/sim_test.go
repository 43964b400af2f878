package verbs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// simPair opens n registrants on one domain of a fresh sim device.
func simPair(t *testing.T, o SimOptions, n int) []*Domain {
	t.Helper()
	dir := t.TempDir()
	if o.Dir == "" {
		o.Dir = filepath.Join(dir, "sim")
	}
	var doms []*Domain
	for i := 0; i < n; i++ {
		dev, err := Open(Options{Provider: "sim", Sim: o})
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

func simDir(d *Domain) string { return d.Device().Info().Extra["dir"] }

func mustErrno(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	if want == 0 && err == nil {
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %s", what, err, errnoName(want))
	}
}

func TestSimCapacity(t *testing.T) {
	t.Run("qps", func(t *testing.T) {
		d := simPair(t, SimOptions{MaxQPs: 4}, 1)[0]
		var qpns []uint32
		for i := 0; i < 4; i++ {
			q, err := d.CreateRcvQP()
			if err != nil {
				t.Fatal(err)
			}
			qpns = append(qpns, q)
		}
		_, err := d.CreateRcvQP()
		mustErrno(t, "create beyond capacity", err, syscall.ENOMEM)
		snap, err := InspectSim(simDir(d))
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.QPs) != 4 {
			t.Fatalf("after ENOMEM the device has %d QPs, want the 4 it had", len(snap.QPs))
		}
		for _, q := range qpns {
			if got, err := d.Unreg(q); err != nil || got != WasDestroyed {
				t.Fatalf("unreg %#x after ENOMEM: %v %v", q, got, err)
			}
		}
		if _, err := d.CreateRcvQP(); err != nil {
			t.Fatalf("create after freeing: %v", err)
		}
	})
	t.Run("registrants per QP", func(t *testing.T) {
		doms := simPair(t, SimOptions{MaxRegs: 2}, 3)
		q, err := doms[0].CreateRcvQP()
		if err != nil {
			t.Fatal(err)
		}
		mustErrno(t, "second registrant", doms[1].Reg(q), 0)
		mustErrno(t, "third registrant", doms[2].Reg(q), syscall.ENOMEM)
		pids, _, err := SimRegistrants(simDir(doms[0]), q)
		if err != nil || len(pids) != 2 {
			t.Fatalf("after ENOMEM: %d registrants (%v), want 2", len(pids), err)
		}
		if _, err := doms[1].Unreg(q); err != nil {
			t.Fatal(err)
		}
		mustErrno(t, "third registrant after a slot freed", doms[2].Reg(q), 0)
	})
}

// TestSimQPNumbers: numbers are 24-bit, increase, and are not reused until
// the space wraps.
func TestSimQPNumbers(t *testing.T) {
	d := simPair(t, SimOptions{MaxQPs: 64}, 1)[0]
	b := NewBatch(1024)
	seen := map[uint32]bool{}
	last := uint32(0)
	wrapped := false
	total := 0
	// Walk the whole 24-bit space once: create and destroy in batches.
	for total < 1<<24+2048 {
		n := 32 // under capacity, so every create succeeds
		if failed, err := d.RunBatch(OpCreate, b, n); err != nil || failed != 0 {
			t.Fatalf("create batch: %d failed, %v", failed, err)
		}
		for i := 0; i < n; i++ {
			q := b.QPNs[i]
			if q > MaxQPN || q == 0 {
				t.Fatalf("qp number %#x out of the 24-bit space", q)
			}
			if q <= last {
				if wrapped || last < MaxQPN-64 {
					t.Fatalf("qp %#x after %#x before the space wrapped", q, last)
				}
				wrapped = true
				seen = map[uint32]bool{}
			}
			if seen[q] {
				t.Fatalf("qp %#x reused", q)
			}
			if !wrapped {
				seen[q] = true
			}
			last = q
		}
		if failed, _ := d.RunBatch(OpUnreg, b, n); failed != 0 {
			t.Fatalf("unreg batch: %d failed", failed)
		}
		total += n
		if testing.Short() && total > 100000 {
			t.Skip("-short: walked 100000 numbers, not the whole 24-bit space")
		}
	}
	if !wrapped {
		t.Fatalf("created %d QPs without wrapping the 24-bit space", total)
	}
}

func TestSimBadInput(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "sim")
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"unknown provider", Options{Provider: "ofed"}, `unknown provider "ofed"`},
		{"semantics", Options{Provider: "sim", Sim: SimOptions{Dir: good, Semantics: "new"}}, `unknown semantics "new"`},
		{"no dir", Options{Provider: "sim"}, "needs a device directory"},
		{"symlinked dir", Options{Provider: "sim", Sim: SimOptions{Dir: link}}, "symbolic links are refused"},
		{"missing parent", Options{Provider: "sim", Sim: SimOptions{Dir: filepath.Join(dir, "no", "sim")}}, "no such file"},
		{"capacity", Options{Provider: "sim", Sim: SimOptions{Dir: good, MaxQPs: -1}}, "negative sim capacity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev, err := Open(tc.opts)
			if err == nil {
				dev.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line containing %q", err, tc.want)
			}
		})
	}
	t.Run("other options on an existing device", func(t *testing.T) {
		d1, err := Open(Options{Provider: "sim", Sim: SimOptions{Dir: good}})
		if err != nil {
			t.Fatal(err)
		}
		defer d1.Close()
		_, err = Open(Options{Provider: "sim", Sim: SimOptions{Dir: good, Cost: Cost{Reg: time.Microsecond}}})
		mustErrno(t, "open with another cost", err, syscall.EEXIST)
	})
	t.Run("device file left half-made or foreign", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			content []byte
			wantErr string // "" : the device is made afresh
		}{
			{"creator died after sizing it", make([]byte, 1<<20), ""},
			{"not a sim device", append([]byte("NOTASIM!"), make([]byte, 1<<20)...), "not a sim device"},
		} {
			d := filepath.Join(t.TempDir(), "sim")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "sim.dev"), tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			dev, err := Open(Options{Provider: "sim", Sim: SimOptions{Dir: d}})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("%s: %v, want the device made afresh", tc.name, err)
				}
				dev.Close()
			} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				if err == nil {
					dev.Close()
				}
				t.Fatalf("%s: %v, want an error containing %q", tc.name, err, tc.wantErr)
			}
		}
	})
	t.Run("domain in a missing directory", func(t *testing.T) {
		d := simPair(t, SimOptions{}, 1)[0]
		_, err := d.Device().OpenDomain(filepath.Join(dir, "nowhere", "domain"), true)
		mustErrno(t, "open domain", err, syscall.ENOENT)
		if !strings.Contains(err.Error(), "nowhere") {
			t.Errorf("error %q does not name the path", err)
		}
	})
	t.Run("qp number over 24 bits", func(t *testing.T) {
		d := simPair(t, SimOptions{}, 1)[0]
		err := d.Reg(1 << 24)
		mustErrno(t, "reg 2^24", err, syscall.EINVAL)
		if !strings.Contains(err.Error(), "0x1000000") {
			t.Errorf("error %q does not name the QP number", err)
		}
		_, err = d.Unreg(0xffffffff)
		mustErrno(t, "unreg 2^32-1", err, syscall.EINVAL)
	})
}

func TestParseCost(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Cost
		err  string
	}{
		{"", Cost{}, ""},
		{"reg=2us,destroy=300us", Cost{Reg: 2 * time.Microsecond, Destroy: 300 * time.Microsecond}, ""},
		{" create=1ms , unreg=0 ", Cost{Create: time.Millisecond}, ""},
		{"reg=fast", Cost{}, `"fast" is not a duration`},
		{"bogus=1us", Cost{}, `unknown operation "bogus"`},
		{"reg", Cost{}, "want OP=DURATION"},
		{"reg=1us,reg=2us", Cost{}, "given twice"},
		{"reg=-1us", Cost{}, "not a duration"},
		{"destroy=1h", Cost{}, "at most 10s"},
		{"create=100us,cmdq=4", Cost{Create: 100 * time.Microsecond, CmdQ: 4}, ""},
		{"cmdq=0", Cost{}, "from 1 to 64"},
		{"cmdq=65", Cost{}, "from 1 to 64"},
		{"cmdq=two", Cost{}, "from 1 to 64"},
		{"lookup=list,scan=20ns", Cost{Lookup: LookupList, Scan: 20 * time.Nanosecond}, ""},
		{"lookup=xarray", Cost{Lookup: LookupXarray}, ""},
		{"lookup=tree", Cost{}, "want xarray"},
		{"scan=20ns", Cost{}, "give it with lookup=list"},
		{"lookup=list,scan=2ms", Cost{}, "at most 1ms per target QP"},
	} {
		got, err := ParseCost(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCost(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseCost(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, err := ParseCost(got.String()); err != nil || back != got {
			t.Errorf("ParseCost(%q.String()=%q) = %v, %v", tc.in, got.String(), back, err)
		}
	}
}

// TestSimLockHolderKilled: a process SIGKILLed while it holds the device
// lock, a QP's lock, its domain's lock (shared or exclusive) or a
// command-queue slot must not wedge the others (the mutexes are robust;
// a dead reader's count is forgiven by the writer it keeps waiting).
func TestSimLockHolderKilled(t *testing.T) {
	for _, tc := range []struct {
		name string
		qp   bool   // hold the QP's lock, not the device lock
		hold string // hold the domain's lock or a command-queue slot instead (childSpec.Hold)
		cost Cost
		op   func(d *Domain, q uint32) error
	}{
		{"domain lock exclusive, reg waits", false, "exclusive", Cost{}, func(d *Domain, q uint32) error { return d.Reg(q) }},
		{"domain lock shared, unreg waits", false, "shared", Cost{}, func(d *Domain, _ uint32) error {
			q, err := d.CreateRcvQP()
			if err == nil {
				_, err = d.Unreg(q)
			}
			return err
		}},
		{"command queue of one, create waits", false, "cmdq", Cost{CmdQ: 1}, func(d *Domain, _ uint32) error {
			q, err := d.CreateRcvQP()
			if err == nil {
				_, err = d.Unreg(q)
			}
			return err
		}},
		{"device lock, create waits", false, "", Cost{}, func(d *Domain, _ uint32) error {
			q, err := d.CreateRcvQP()
			if err == nil {
				_, err = d.Unreg(q)
			}
			return err
		}},
		{"qp lock, reg waits", true, "", Cost{}, func(d *Domain, q uint32) error { return d.Reg(q) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := simPair(t, SimOptions{Cost: tc.cost}, 1)[0]
			q, err := d.CreateRcvQP()
			if err != nil {
				t.Fatal(err)
			}
			spec := childSpec{Action: "holdlock", Options: Options{Provider: "sim", Sim: SimOptions{Dir: simDir(d)}}}
			if tc.qp {
				spec.QPN = q
			}
			if tc.hold != "" {
				spec.Action, spec.Domain, spec.Hold = "holddomain", d.Path(), tc.hold
			}
			ch, err := startChild(spec)
			if err != nil {
				t.Fatal(err)
			}
			// While the child holds the lock the operation blocks; after
			// the kill it must complete.
			done := make(chan error, 1)
			go func() { done <- tc.op(d, q) }()
			select {
			case err := <-done:
				t.Fatalf("completed while another process held the lock: %v", err)
			case <-time.After(200 * time.Millisecond):
			}
			if err := ch.kill(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("after the holder died: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the device is wedged 20s after the lock holder was killed")
			}
			if got, err := d.Unreg(q); err != nil || got != WasDestroyed {
				t.Fatalf("unreg after recovery: %v %v", got, err)
			}
		})
	}
}

// TestSimReap: a dead process's registrations are dropped by ReapSim, and
// ReapSim refuses a live process.
func TestSimReap(t *testing.T) {
	d := simPair(t, SimOptions{}, 1)[0]
	dir := simDir(d)
	q, err := d.CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReapSim(dir, os.Getpid())
	mustErrno(t, "reap a live process", err, syscall.EBUSY)

	ch, err := startChild(childSpec{Action: "reg", Options: Options{Provider: "sim", Sim: SimOptions{Dir: dir}}, Domain: d.Path(), QPN: q})
	if err != nil {
		t.Fatal(err)
	}
	pid := ch.cmd.Process.Pid
	pids, _, err := SimRegistrants(dir, q)
	if err != nil || len(pids) != 2 || pids[1] != pid {
		t.Fatalf("registrants %v (%v), want us and child %d", pids, err, pid)
	}
	if err := ch.kill(); err != nil {
		t.Fatal(err)
	}
	n, err := ReapSim(dir, pid)
	if err != nil || n != 1 {
		t.Fatalf("reap: dropped %d, %v; want 1", n, err)
	}
	if got, err := d.Unreg(q); err != nil || got != WasDestroyed {
		t.Fatalf("our unreg after the reap: %v %v, want the QP destroyed", got, err)
	}
	snap, err := InspectSim(dir)
	if err != nil || len(snap.QPs) != 0 {
		t.Fatalf("after all: %+v %v, want no QPs", snap, err)
	}
}

// TestSimCostModel: the injected cost is what an operation takes, and the
// destroy cost is paid only by the last unreg.
func TestSimCostModel(t *testing.T) {
	const destroy = 2 * time.Millisecond
	doms := simPair(t, SimOptions{Cost: Cost{Destroy: destroy}}, 2)
	a, b := doms[0], doms[1]
	q, err := a.CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reg(q); err != nil {
		t.Fatal(err)
	}
	batch := NewBatch(1)
	batch.QPNs[0] = q
	if _, err := a.RunBatch(OpUnreg, batch, 1); err != nil || batch.Errno(0) != 0 {
		t.Fatal(err, batch.Errno(0))
	}
	kept := time.Duration(batch.NS[0])
	if _, err := b.RunBatch(OpUnreg, batch, 1); err != nil || batch.Errno(0) != 0 {
		t.Fatal(err, batch.Errno(0))
	}
	last := time.Duration(batch.NS[0])
	if batch.Destroyed(0) != WasDestroyed {
		t.Fatalf("last unreg: %v", batch.Destroyed(0))
	}
	// Known answer, generous bounds: a busy-wait never ends early.
	if last < destroy || last > destroy+50*time.Millisecond {
		t.Errorf("last unreg took %v, want about %v", last, destroy)
	}
	if kept >= destroy {
		t.Errorf("an unreg that destroyed nothing took %v, at least the destroy cost", kept)
	}
}
