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

// TestConformDetectsBrokenSemantics proves the table can fail: a legacy
// registrant checked with upstream expectations must fail S3.
func TestConformDetectsBrokenSemantics(t *testing.T) {
	dir := t.TempDir()
	c := &conformer{opts: verbs.Options{Provider: "sim", Sim: verbs.SimOptions{Dir: dir + "/sim", Semantics: verbs.Legacy}},
		dir: dir, info: verbs.DeviceInfo{XRC: true}, upstream: true}
	c.domainSeq = 1
	defer c.closeAll()
	if _, err := checkRegAgain(c); err == nil {
		t.Fatal("S3 with upstream expectations passed on a legacy device")
	}
}
