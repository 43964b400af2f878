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
	Mlnx             bool   // through the MLNX_OFED build of the double
	Devices          string // the double's devices; both kinds when empty
	S11On            string // the device S11 names when it ran on another
}

const all = "S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S11 S12 S13 S14 S15"

// Beside an XRC device, S11 runs on the host's device without XRC; with
// none, it skips.
var conformCases = []conformCase{
	{"legacy", "xbfake0", "legacy", statuses(all, ""), false, "", "xbnoxrc0"},
	{"legacy", "xbfake0", "legacy", statuses("S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15", "S11"), false, "xbfake0", ""},
	{"legacy", "xbnoxrc0", "legacy", statuses("S11", "S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15"), false, "", ""},
	{"legacy", "xbfake0", "legacy-mlnx", statuses(all, ""), true, "", "xbnoxrc0"},
	{"legacy", "xbnoxrc0", "legacy-mlnx", statuses("S11", "S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15"), true, "", ""},
	{"rdma", "xbfake0", "upstream", statuses(all, ""), false, "", "xbnoxrc0"},
	{"rdma", "xbfake0", "upstream", statuses("S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15", "S11"), false, "xbfake0,xbfake1", ""},
	{"rdma", "xbnoxrc0", "upstream", statuses("S11", "S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15"), false, "", ""},
}

// TestDoubleConform runs the conformance table S1–S15 through the legacy
// and rdma providers against the double; S10 re-executes the test binary
// as real child processes that are SIGKILLed while registered.
func TestDoubleConform(t *testing.T) {
	for _, c := range conformCases {
		devices := c.Devices
		if devices == "" {
			devices = "xbfake0,xbnoxrc0:noxrc"
		}
		t.Run(c.Provider+"/"+c.Semantics+"/"+c.Device+"/"+devices, func(t *testing.T) {
			if ok, why := built(c.Provider); !ok {
				t.Skipf("%s: not in this build: %s", c.Provider, why)
			}
			lib := testdouble.LibDir(t)
			if c.Mlnx {
				lib = testdouble.MlnxLibDir(t)
			}
			arg, _ := json.Marshal(c)
			testdouble.RunTest(t, "TestConformInDouble",
				append(testdouble.Env(lib, filepath.Join(t.TempDir(), "state"), devices), conformCaseEnv+"="+string(arg)))
		})
	}
}

// silentCaseEnv marks the child of TestDoubleConformSilentDestroy.
const silentCaseEnv = "XRCBENCH_TEST_CONFORM_SILENT"

// TestDoubleConformSilentDestroy: a device whose last ibv_destroy_qp of a
// QP returns 0 and leaves the QP (the kernel's shared-QP path when the
// hardware destroy fails) fails conform on rdma at the first last unreg,
// because the device itself still lists the QP number; a good device's
// destructions are each confirmed that way.
func TestDoubleConformSilentDestroy(t *testing.T) {
	if !verbs.CgoBuilt {
		t.Skip("the rdma provider is not in this build: " + verbs.NoCgo)
	}
	lib := testdouble.LibDir(t)
	testdouble.RunTest(t, "TestConformSilentInDouble",
		append(testdouble.Env(lib, filepath.Join(t.TempDir(), "state"), "xbfake0,xbsilent0:silentdestroy"), silentCaseEnv+"=1"))
}

// TestConformSilentInDouble is the child side of TestDoubleConformSilentDestroy.
func TestConformSilentInDouble(t *testing.T) {
	if os.Getenv(silentCaseEnv) == "" {
		t.Skip("runs only as a child process with the libibverbs test double loaded (started by TestDoubleConformSilentDestroy)")
	}
	for _, tc := range []struct {
		device, s1, destructions string
	}{
		{"xbfake0", "pass", "destruction(s) confirmed through the test double's device"},
		{"xbsilent0", "fail", ""},
	} {
		rep, err := Conform(verbs.Options{Provider: "rdma", Device: tc.device}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		s1 := rep.Checks[0]
		if s1.ID != "S1" || s1.Status != tc.s1 {
			t.Errorf("%s: S1 %s: %s, want %s", tc.device, s1.Status, s1.Detail, tc.s1)
		}
		if tc.s1 == "fail" && !strings.Contains(s1.Detail, "still lists qp") {
			t.Errorf("%s: S1 failed for another reason: %s", tc.device, s1.Detail)
		}
		if !strings.Contains(rep.Destructions, tc.destructions) {
			t.Errorf("%s: destructions %q, want %q", tc.device, rep.Destructions, tc.destructions)
		}
	}
}

// built says whether this build has the provider, and if not why: every
// provider needs cgo (whether a libibverbs has the legacy API is the
// child's to find, in the double).
func built(provider string) (bool, string) {
	if !verbs.CgoBuilt {
		return false, verbs.NoCgo
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
		if chk.ID == "S11" && chk.Status == CheckPass {
			named := c.S11On != "" && strings.Contains(chk.Detail, "(run on "+c.S11On+",")
			if named != (c.S11On != "") || (c.S11On == "" && strings.Contains(chk.Detail, "(run on ")) {
				t.Errorf("S11: %q, want it to name the device it ran on only when that is another (%q)", chk.Detail, c.S11On)
			}
		}
		if chk.ID == "S11" && chk.Status == CheckSkip && !strings.Contains(chk.Detail, "no other device of this host lacks it") {
			t.Errorf("S11 skipped for another reason: %s", chk.Detail)
		}
	}
}
