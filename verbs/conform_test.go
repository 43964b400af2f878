package verbs

import (
	"syscall"
	"testing"
)

// TestConformSim runs the whole semantics table on the sim device in both
// semantics. Every check must pass, except those the semantics itself has
// no such behaviour for, which must skip with a reason.
func TestConformSim(t *testing.T) {
	for _, tc := range []struct {
		sem      Semantics
		wantSkip map[string]bool
	}{
		{Legacy, map[string]bool{}},
		{Upstream, map[string]bool{"S8": true}},
		{LegacyMlnx, map[string]bool{}},
	} {
		t.Run(string(tc.sem), func(t *testing.T) {
			rep, err := Conform(Options{Provider: "sim", Sim: SimOptions{Semantics: tc.sem}}, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Checks) != 15 {
				t.Fatalf("got %d checks, want 15 (S1–S15)", len(rep.Checks))
			}
			for _, c := range rep.Checks {
				want := CheckPass
				switch {
				case tc.wantSkip[c.ID]:
					want = CheckSkip
				case c.ID == "S11":
					// The sim checking its own no-XRC answer: not evidence.
					want = CheckSelfTest
				}
				if c.Status != want {
					t.Errorf("%s %s: %s (%s), want %s", c.ID, c.Name, c.Status, c.Detail, want)
				}
				if c.Detail == "" {
					t.Errorf("%s: no detail", c.ID)
				}
			}
			if rep.Semantics != string(tc.sem) {
				t.Errorf("report semantics %q, want %q", rep.Semantics, tc.sem)
			}
		})
	}
}

// TestConformDetectsBrokenSemantics proves the table can fail: a device
// checked with another semantics' expectations fails the checks where the
// two differ (a registrant is a context in legacy, a counted handle
// upstream, the process in legacy-mlnx).
func TestConformDetectsBrokenSemantics(t *testing.T) {
	for _, tc := range []struct {
		device, expect Semantics
		check          func(*conformer) (string, error)
		id             string
	}{
		{Legacy, Upstream, checkRegAgain, "S3"},
		{Legacy, LegacyMlnx, checkRegAgain, "S3"},
		{Legacy, LegacyMlnx, checkUnregNotRegistered, "S8"},
		{LegacyMlnx, Legacy, checkRegAdds, "S2"},
		{LegacyMlnx, Legacy, checkModifyShared, "S14"},
		{Upstream, LegacyMlnx, checkRegAgain, "S3"},
	} {
		t.Run(string(tc.device)+"/"+string(tc.expect)+"/"+tc.id, func(t *testing.T) {
			dir := t.TempDir()
			c := &conformer{opts: Options{Provider: "sim", Sim: SimOptions{Dir: dir + "/sim", Semantics: tc.device}},
				dir: dir, info: DeviceInfo{XRC: true}, upstream: tc.expect == Upstream, mlnx: tc.expect == LegacyMlnx}
			c.domainSeq = 1
			defer c.closeAll()
			if _, err := tc.check(c); err == nil {
				t.Fatalf("%s with %s expectations passed on a %s device", tc.id, tc.expect, tc.device)
			}
		})
	}
}

func TestErrnoName(t *testing.T) {
	for e, want := range map[syscall.Errno]string{0: "success", syscall.ENODEV: "ENODEV", syscall.EOPNOTSUPP: "EOPNOTSUPP",
		syscall.ETIMEDOUT: "ETIMEDOUT", syscall.Errno(4000): "errno 4000"} {
		if got := ErrnoName(e); got != want {
			t.Errorf("ErrnoName(%d) = %q, want %q", int(e), got, want)
		}
	}
}
