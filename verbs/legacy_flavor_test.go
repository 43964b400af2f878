package verbs

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testdouble"
)

// TestLegacyDecide is the flavor rule (xb_legacy_decide) over every kind
// of evidence: the two consistent ones name a flavor, the contradictions
// and a foreign errno are unknown, and without a probe the exports decide.
func TestLegacyDecide(t *testing.T) {
	for _, c := range []struct {
		exports bool
		probe   int
		want    string
		why     string
	}{
		{false, 0, FlavorOFED1, "succeeded"},
		{true, int(syscall.EEXIST), FlavorMlnxCompat, "EEXIST"},
		{false, int(syscall.EEXIST), FlavorUnknown, "does not export"},
		{true, 0, FlavorUnknown, "exports ibv_cmd_open_xrcd"},
		{false, int(syscall.EPERM), FlavorUnknown, "errno 1"},
		{true, int(syscall.EINVAL), FlavorUnknown, "errno 22"},
		{false, -1, FlavorOFED1, "no device with XRC"},
		{true, -1, FlavorMlnxCompat, "no device with XRC"},
	} {
		got, why := legacyDecide(c.exports, c.probe)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("exports %v, probe %d: %s (%s), want %s (%q)", c.exports, c.probe, got, why, c.want, c.why)
		}
	}
}

// flavorCase is one library the legacy provider is bound to in the double.
type flavorCase struct {
	Mlnx   bool   // the MLNX_OFED build of the double
	Env    string // XRCBENCH_FAKEVERBS_LEGACY, "" for the build's own
	Flavor string // want; FlavorUnknown: the open is refused
}

// TestDoubleLegacyFlavor binds the legacy provider to each build of the
// double, with its own answers and with the other build's, in a child
// process each (the flavor is decided once per process).
func TestDoubleLegacyFlavor(t *testing.T) {
	for _, c := range []flavorCase{
		{false, "", FlavorOFED1},
		{true, "", FlavorMlnxCompat},
		{false, "mlnx-compat", FlavorUnknown}, // EEXIST without the layer's exports
		{true, "ofed1", FlavorUnknown},        // the layer's exports, OFED 1.x's answers
	} {
		t.Run(strings.Join([]string{map[bool]string{false: "ofed1-build", true: "mlnx-build"}[c.Mlnx], c.Env}, "/"), func(t *testing.T) {
			lib := doubleLibDir(t)
			if c.Mlnx {
				lib = testdouble.MlnxLibDir(t)
			}
			var env []string
			if c.Env != "" {
				env = []string{"XRCBENCH_FAKEVERBS_LEGACY=" + c.Env}
			}
			arg, _ := json.Marshal(c)
			runInDoubleAt(t, lib, env, "legacy-flavor", "xbfake0", string(arg))
		})
	}
}

func init() {
	doubleCases["legacy-flavor"] = func(t *testing.T, arg string) {
		var c flavorCase
		if err := json.Unmarshal([]byte(arg), &c); err != nil {
			t.Fatal(err)
		}
		dev, err := Open(Options{Provider: "legacy"})
		if c.Flavor == FlavorUnknown {
			if err == nil {
				dev.Close()
				t.Fatalf("open succeeded, want a refusal: %+v", dev.Info())
			}
			if msg := err.Error(); !strings.Contains(msg, "neither OFED 1.x nor MLNX_OFED") || strings.Contains(msg, "\n") {
				t.Errorf("refusal %q: want one line naming both libraries", msg)
			}
			if !errors.Is(err, ErrNotSupported) {
				t.Errorf("refusal %v is not ErrNotSupported", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		in := dev.Info()
		wantSem, wantReg := string(Legacy), RegistrantContext
		if c.Flavor == FlavorMlnxCompat {
			wantSem, wantReg = string(LegacyMlnx), RegistrantProcess
		}
		if in.LegacyFlavor != c.Flavor || in.Semantics != wantSem || in.Registrant != wantReg {
			t.Errorf("flavor %q semantics %q registrant %q, want %q %q %q (evidence: %s)", in.LegacyFlavor, in.Semantics,
				in.Registrant, c.Flavor, wantSem, wantReg, in.Extra["legacy_flavor_evidence"])
		}
		syms := legacySymbols()
		for _, s := range []string{"ibv_reg_xrc_rcv_qp@IBVERBS_1.1", "ibv_modify_xrc_rcv_qp@IBVERBS_1.1"} {
			if !strings.Contains(syms, s) {
				t.Errorf("symbols %q lack %s", syms, s)
			}
		}
		if got := strings.Contains(syms, "ibv_cmd_open_qp@IBVERBS_1.1"); got != c.Mlnx {
			t.Errorf("symbols %q: ibv_cmd_open_qp exported %v, want %v", syms, got, c.Mlnx)
		}
		// The creator's own second reg: idempotent on OFED 1.x (S3),
		// EEXIST on MLNX_OFED, where the process holds it already.
		dom, err := dev.OpenDomain(filepath.Join(t.TempDir(), "dom"), true)
		if err != nil {
			t.Fatal(err)
		}
		q, err := dom.CreateRcvQP()
		if err != nil {
			t.Fatal(err)
		}
		wantReg2 := error(nil)
		if c.Flavor == FlavorMlnxCompat {
			wantReg2 = syscall.EEXIST
		}
		if err := dom.Reg(q); !errors.Is(err, wantReg2) && !(wantReg2 == nil && err == nil) {
			t.Errorf("creator's second reg: %v, want %v", err, wantReg2)
		}
		if _, err := dom.Unreg(q); err != nil {
			t.Fatalf("unreg: %v", err)
		}
		if err := dom.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
