package conform

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testdouble"
	"github.com/xrcbench/xrcbench/verbs"
)

// The conformance table through the libibverbs test double runs in a
// child process of the test binary started with LD_LIBRARY_PATH at
// build/fakeverbs: the dynamic linker picks the library at exec time, so
// the parent cannot switch. TestConformInDouble is the child's side.

// conformCaseEnv hands the child its case (a conformCase in JSON).
const conformCaseEnv = "XRCBENCH_TEST_CONFORM_CASE"

// wantChecks is the expected status of each conformance check.
type wantChecks map[string]string

func statuses(pass, skip string) wantChecks {
	w := wantChecks{}
	for _, id := range strings.Fields(pass) {
		w[id] = "pass"
	}
	for _, id := range strings.Fields(skip) {
		w[id] = "skip"
	}
	return w
}

// conformCase is one run of the conformance table through the double.
type conformCase struct {
	Provider, Device string
	Semantics        string
	Want             wantChecks
}

var conformCases = []conformCase{
	{"legacy", "xbfake0", "legacy", statuses("S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15", "S11")},
	{"legacy", "xbnoxrc0", "legacy", statuses("S11", "S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15")},
	{"rdma", "xbfake0", "upstream", statuses("S1 S2 S3 S4 S5 S6 S7 S9 S10 S12 S13 S14 S15", "S8 S11")},
	{"rdma", "xbnoxrc0", "upstream", statuses("S11", "S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15")},
}

// TestDoubleConform runs the conformance table S1–S15 through the legacy
// and rdma providers against the double; S10 re-executes the test binary
// as real child processes that are SIGKILLed while registered.
func TestDoubleConform(t *testing.T) {
	lib := testdouble.LibDir(t)
	for _, c := range conformCases {
		t.Run(c.Provider+"/"+c.Device, func(t *testing.T) {
			if ok, why := built(c.Provider); !ok {
				t.Skipf("%s: not in this build: %s", c.Provider, why)
			}
			arg, _ := json.Marshal(c)
			testdouble.RunTest(t, "TestConformInDouble",
				append(testdouble.Env(lib, filepath.Join(t.TempDir(), "state"), "xbfake0,xbnoxrc0:noxrc"), conformCaseEnv+"="+string(arg)))
		})
	}
}

// built says whether this build has the provider, and if not why: the
// rdma provider needs the rdma build tag (legacy is always built; whether
// a libibverbs has its API is the child's to find, in the double).
func built(provider string) (bool, string) {
	if provider == "rdma" && !verbs.RDMABuilt {
		return false, verbs.RDMANotBuilt
	}
	return true, ""
}

// TestConformInDouble is the child side of TestDoubleConform.
func TestConformInDouble(t *testing.T) {
	arg := os.Getenv(conformCaseEnv)
	if arg == "" {
		t.Skip("runs only as a child process with the libibverbs test double loaded (started by TestDoubleConform)")
	}
	var c conformCase
	if err := json.Unmarshal([]byte(arg), &c); err != nil {
		t.Fatal(err)
	}
	rep, err := Conform(verbs.Options{Provider: c.Provider, Device: c.Device}, t.TempDir())
	if err != nil {
		t.Fatalf("Conform: %v", err)
	}
	if rep.Semantics != c.Semantics || rep.Device != c.Device {
		t.Errorf("report: semantics %q device %q, want %q %q", rep.Semantics, rep.Device, c.Semantics, c.Device)
	}
	if len(rep.Checks) != len(c.Want) {
		t.Errorf("%d checks, want %d", len(rep.Checks), len(c.Want))
	}
	for _, chk := range rep.Checks {
		t.Logf("%-4s %-5s %s: %s", chk.ID, chk.Status, chk.Name, chk.Detail)
		if want := c.Want[chk.ID]; chk.Status != want {
			t.Errorf("%s %s: %s (%s), want %s", chk.ID, chk.Name, chk.Status, chk.Detail, want)
		}
	}
}
