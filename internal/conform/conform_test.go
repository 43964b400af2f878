package conform

import (
	"testing"

	"github.com/xrcbench/xrcbench/verbs"
)

// TestConformSim runs the whole semantics table on the sim device in both
// semantics. Every check must pass, except those the semantics itself has
// no such behaviour for, which must skip with a reason.
func TestConformSim(t *testing.T) {
	for _, tc := range []struct {
		sem      verbs.Semantics
		wantSkip map[string]bool
	}{
		{verbs.Legacy, map[string]bool{}},
		{verbs.Upstream, map[string]bool{"S8": true}},
		{verbs.LegacyMlnx, map[string]bool{}},
	} {
		t.Run(string(tc.sem), func(t *testing.T) {
			rep, err := Conform(verbs.Options{Provider: "sim", Sim: verbs.SimOptions{Semantics: tc.sem}}, t.TempDir())
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
		device, expect verbs.Semantics
		check          func(*conformer) (string, error)
		id             string
	}{
		{verbs.Legacy, verbs.Upstream, checkRegAgain, "S3"},
		{verbs.Legacy, verbs.LegacyMlnx, checkRegAgain, "S3"},
		{verbs.Legacy, verbs.LegacyMlnx, checkUnregNotRegistered, "S8"},
		{verbs.LegacyMlnx, verbs.Legacy, checkRegAdds, "S2"},
		{verbs.LegacyMlnx, verbs.Legacy, checkModifyShared, "S14"},
		{verbs.Upstream, verbs.LegacyMlnx, checkRegAgain, "S3"},
	} {
		t.Run(string(tc.device)+"/"+string(tc.expect)+"/"+tc.id, func(t *testing.T) {
			dir := t.TempDir()
			c := &conformer{opts: verbs.Options{Provider: "sim", Sim: verbs.SimOptions{Dir: dir + "/sim", Semantics: tc.device}},
				dir: dir, info: verbs.DeviceInfo{XRC: true}, upstream: tc.expect == verbs.Upstream, mlnx: tc.expect == verbs.LegacyMlnx}
			c.domainSeq = 1
			defer c.closeAll()
			if _, err := tc.check(c); err == nil {
				t.Fatalf("%s with %s expectations passed on a %s device", tc.id, tc.expect, tc.device)
			}
		})
	}
}

// S10 on rdma expects the running kernel's cleanup of a dead process's
// shared QP handles: before 4.13 only closed (the QP stays with its
// XRCD), from 4.13 destroyed.
func TestS10KernelRelease(t *testing.T) {
	for _, tt := range []struct {
		release    string
		closesOnly bool
		note       string
	}{
		{"3.10.0-1160.el7.x86_64", true, ""},
		{"4.9.0-8-amd64", true, ""},
		{"4.12.14-lp150.12-default", true, ""},
		{"4.13.0-16-generic", false, " (Linux 4.13.0-16-generic, 4.13 on)"},
		{"4.18.0-553.el8_10.x86_64", false, " (Linux 4.18.0-553.el8_10.x86_64, 4.13 on)"},
		{"5.4.0", false, " (Linux 5.4.0, 4.13 on)"},
		{"6.8.0-45-generic", false, " (Linux 6.8.0-45-generic, 4.13 on)"},
		{"garbage", false, ` (kernel release "garbage" unreadable: 4.13 on assumed)`},
	} {
		got := s10For(tt.release)
		if got.closesOnly != tt.closesOnly || got.note != tt.note {
			t.Errorf("s10For(%q) = %+v, want closesOnly %v note %q", tt.release, got, tt.closesOnly, tt.note)
		}
	}
}
