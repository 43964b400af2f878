package verbs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testdouble"
)

// Tests that need the libibverbs test double run in a child process of
// the test binary started with LD_LIBRARY_PATH at build/fakeverbs: the
// dynamic linker picks the library at exec time, so the parent (linked
// against the system libibverbs) cannot switch. TestInDouble is the child's
// entry point; runInDouble starts it for one named case.

const (
	doubleCaseEnv = "XRCBENCH_TEST_DOUBLE_CASE"
	doubleArgEnv  = "XRCBENCH_TEST_DOUBLE_ARG"
)

// doubleCases are the child sides, by name; rdma_test.go adds its own.
var doubleCases = map[string]func(t *testing.T, arg string){}

// doubleLibDir is build/fakeverbs, or a skip with the reason; doubleEnv
// the environment of a process that loads the double.
var doubleLibDir, doubleEnv = testdouble.LibDir, testdouble.Env

// runInDouble runs the child case name against the double configured with
// devices; arg is handed to the case. The child's failures fail t.
func runInDouble(t *testing.T, name, devices, arg string) {
	t.Helper()
	runInDoubleAt(t, doubleLibDir(t), nil, name, devices, arg)
}

// runInDoubleAt is runInDouble with the double in lib (the MLNX_OFED
// build, testdouble.MlnxLibDir) and env added to the child's environment.
func runInDoubleAt(t *testing.T, lib string, env []string, name, devices, arg string) {
	t.Helper()
	// A child that hangs (a lock never released) fails the test in
	// bounded time instead of stalling the whole run.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestInDouble$", "-test.v", "-test.count=1")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) } // a goroutine dump says where
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(doubleEnv(lib, filepath.Join(t.TempDir(), "state"), devices), doubleCaseEnv+"="+name, doubleArgEnv+"="+arg)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s (devices %q): %v\n%s", name, devices, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestInDouble") {
		t.Fatalf("child %s did not pass:\n%s", name, out)
	}
	t.Logf("child %s:\n%s", name, out)
}

// TestInDouble is the child side of runInDouble.
func TestInDouble(t *testing.T) {
	name := os.Getenv(doubleCaseEnv)
	if name == "" {
		t.Skip("runs only as a child process with the libibverbs test double loaded (started by TestDouble*)")
	}
	f := doubleCases[name]
	if f == nil {
		t.Fatalf("no double case %q in this build", name)
	}
	f(t, os.Getenv(doubleArgEnv))
}

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
	Mlnx             bool // through the MLNX_OFED build of the double
}

var conformCases = []conformCase{
	{"legacy", "xbfake0", "legacy", statuses("S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15", "S11"), false},
	{"legacy", "xbnoxrc0", "legacy", statuses("S11", "S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15"), false},
	{"legacy", "xbfake0", "legacy-mlnx", statuses("S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15", "S11"), true},
	{"legacy", "xbnoxrc0", "legacy-mlnx", statuses("S11", "S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15"), true},
	{"rdma", "xbfake0", "upstream", statuses("S1 S2 S3 S4 S5 S6 S7 S9 S10 S12 S13 S14 S15", "S8 S11"), false},
	{"rdma", "xbnoxrc0", "upstream", statuses("S11", "S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S12 S13 S14 S15"), false},
}

// TestDoubleConform runs the conformance table S1–S15 through the legacy
// and rdma providers against the double; S10 re-executes the test binary
// as real child processes that are SIGKILLed while registered.
func TestDoubleConform(t *testing.T) {
	for _, c := range conformCases {
		c := c
		t.Run(c.Provider+"/"+c.Semantics+"/"+c.Device, func(t *testing.T) {
			if p := providers[c.Provider]; p == nil {
				t.Fatalf("provider %s is not registered", c.Provider)
			} else if p.open == nil {
				t.Skipf("%s: not in this build: %s", c.Provider, p.Reason)
			}
			lib := doubleLibDir(t)
			if c.Mlnx {
				lib = testdouble.MlnxLibDir(t)
			}
			arg, _ := json.Marshal(c)
			runInDoubleAt(t, lib, nil, "conform", "xbfake0,xbnoxrc0:noxrc", string(arg))
		})
	}
}

func init() {
	doubleCases["conform"] = func(t *testing.T, arg string) {
		var c conformCase
		if err := json.Unmarshal([]byte(arg), &c); err != nil {
			t.Fatal(err)
		}
		rep, err := Conform(Options{Provider: c.Provider, Device: c.Device}, t.TempDir())
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
	doubleCases["legacy-device"] = func(t *testing.T, _ string) {
		if ok, why := legacyProbe(); !ok {
			t.Fatalf("legacy API not found in the double: %s", why)
		}
		if lib := legacyLibrary(); !strings.Contains(lib, "fakeverbs") {
			t.Fatalf("libibverbs is %s, not the double", lib)
		}
		dev, err := Open(Options{Provider: "legacy"})
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		in := dev.Info()
		if in.Name != "xbfake0" || in.Semantics != "legacy" || !in.XRC || !in.LegacyAPI || in.FWVer != "99.1.0" ||
			in.Driver != "xrcbench_fake" || in.NUMANode != 0 || in.VendorID != 0xfa4e || !in.TestDouble {
			t.Errorf("info = %+v", in)
		}
		// The legacy create hands the double the legacy ibv_qp_init_attr;
		// a domain pointer read from the wrong offset would fail EINVAL.
		dom, err := dev.OpenDomain(filepath.Join(t.TempDir(), "dom"), true)
		if err != nil {
			t.Fatal(err)
		}
		q, err := dom.CreateRcvQP()
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if err := dom.Reg(q); err != nil {
			t.Fatalf("reg again: %v", err)
		}
		if _, err := dom.Unreg(q); err != nil {
			t.Fatalf("unreg: %v", err)
		}
		if _, err := dom.Unreg(q); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("second unreg after an idempotent reg: %v, want EINVAL (S3, S8)", err)
		}
		if err := dom.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDoubleLegacyDevice(t *testing.T) {
	runInDouble(t, "legacy-device", "xbfake0", "")
}

// TestLegacyUnavailableWithRdmaCore: rdma-core's libibverbs lacks the
// legacy calls, so the provider must say so instead of failing later.
func TestLegacyUnavailableWithRdmaCore(t *testing.T) {
	lib := legacyLibrary()
	ok, why := legacyProbe()
	switch {
	case ok:
		t.Skipf("the loaded libibverbs (%s) exports the legacy XRC API", lib)
	case lib == "":
		if !strings.Contains(why, "cannot be loaded") {
			t.Errorf("no libibverbs: reason %q", why)
		}
	case !strings.Contains(why, "does not export ibv_") || !strings.Contains(why, "--provider rdma"):
		t.Errorf("reason %q should name the missing symbol and the alternative", why)
	}
	var found bool
	for _, p := range Providers() {
		if p.Name == "legacy" {
			found = true
			if p.Available || p.Reason != why {
				t.Errorf("Providers: legacy %+v, want unavailable because %q", p, why)
			}
		}
	}
	if !found {
		t.Error("Providers does not list legacy")
	}
	_, err := Open(Options{Provider: "legacy"})
	if !errors.Is(err, ErrNotSupported) || !errors.Is(err, syscall.ENOSYS) || !strings.Contains(err.Error(), "legacy XRC API") {
		t.Errorf("Open(legacy) = %v, want a clear not-supported error", err)
	}
}
