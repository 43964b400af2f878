package verbs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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
	testdouble.RunTest(t, "TestInDouble",
		append(append(doubleEnv(lib, filepath.Join(t.TempDir(), "state"), devices), doubleCaseEnv+"="+name, doubleArgEnv+"="+arg), env...))
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

func init() {
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
