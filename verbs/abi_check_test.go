package verbs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// TestABICheck compiles verbs/ctest/abi_check.c, the static asserts that
// hold ibv_abi.h (and legacy_abi.h, rtrpath.h) to the installed rdma-core
// <infiniband/verbs.h>, and shows that the check can fail: copies of the
// headers with one enum value changed, and with one member dropped, must
// each be refused, naming what differs.
func TestABICheck(t *testing.T) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		testenv.Skip(t, testenv.CC, "no C compiler (%s): %v", cc, err)
	}
	probe := exec.Command(cc, "-E", "-o", os.DevNull, filepath.Join("ctest", "have_verbs.c"))
	if out, err := probe.CombinedOutput(); err != nil {
		testenv.Skip(t, testenv.Headers, "<infiniband/verbs.h> is not installed, nothing to compare with (apt-get install libibverbs-dev): %s",
			strings.SplitN(string(out), "\n", 2)[0])
	}
	compile := func(incdir string) (string, error) {
		cmd := exec.Command(cc, "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-c", "-o", os.DevNull,
			"-I", incdir, filepath.Join("ctest", "abi_check.c"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := compile("."); err != nil {
		t.Fatalf("ibv_abi.h disagrees with the installed <infiniband/verbs.h>: %v\n%s", err, out)
	}

	// abi_check.c includes its headers with quotes, which look in the
	// file's own folder first: it is copied beside the mutated headers.
	mutate := func(name, old, new, wantMsg string) {
		t.Helper()
		dir := t.TempDir()
		hdrs, _ := filepath.Glob("*.h")
		for _, h := range append(hdrs, filepath.Join("ctest", "abi_check.c")) {
			b, err := os.ReadFile(h)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(h) == "ibv_abi.h" {
				if !strings.Contains(string(b), old) {
					t.Fatalf("%s: ibv_abi.h no longer has %q", name, old)
				}
				b = []byte(strings.Replace(string(b), old, new, 1))
			}
			dst := filepath.Join(dir, filepath.Base(h))
			if filepath.Ext(h) == ".c" {
				dst = filepath.Join(dir, "ctest", filepath.Base(h))
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(cc, "-std=gnu11", "-c", "-o", os.DevNull, "-I", dir, filepath.Join(dir, "ctest", "abi_check.c"))
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s: the ABI check compiled: it does not catch this drift", name)
		} else if !strings.Contains(string(out), wantMsg) {
			t.Errorf("%s: refused, but not naming %q:\n%s", name, wantMsg, out)
		}
	}
	mutate("an enum value", "#define XB_IBV_QPT_XRC_RECV 10", "#define XB_IBV_QPT_XRC_RECV 11", "XB_IBV_QPT_XRC_RECV == IBV_QPT_XRC_RECV")
	mutate("a member", "\tuint16_t port_cap_flags2;\n", "", "ibv_port_attr size")
	mutate("an op slot", "create_srq_ex;", "create_srq_ex, one_more;", "verbs_context.query_port from the end")
}
