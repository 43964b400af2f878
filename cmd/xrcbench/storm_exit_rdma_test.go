package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
)

// TestStormExitThroughDouble: a storm with teardown exit through the rdma
// and legacy providers asks the kernel's RDMA netlink for the device's QPs.
// The double's device is no kernel device, so the kernel cannot list it:
// the result says why, in the netlink reader's words (on this CI machine,
// a kernel without RDMA netlink), and the run is still ok.
func TestStormExitThroughDouble(t *testing.T) {
	lib, err := filepath.Abs(filepath.Join("..", "..", "build", "fakeverbs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(lib, "libibverbs.so.1")); err != nil {
		testenv.Skip(t, testenv.Double, "it is not built (%s): run make fakeverbs (needs libibverbs-dev)", lib)
	}
	bin := rdmaBinary(t)
	want := "not measurable here: the kernel has no RDMA netlink"
	if fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_RDMA); err == nil {
		unix.Close(fd)
		want = `not measurable here: the kernel's RDMA netlink has no device named "xbfake0"`
	}
	wl := filepath.Join(t.TempDir(), "storm-exit.yaml")
	spec := "name: storm-exit\ndescription: the storm, torn down by the ranks' exit\nmode: storm\nstorm:\n  nodes: 3\n  rails: 1\n  arrival: burst\n  teardown: exit\n"
	if err := os.WriteFile(wl, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, provider := range []string{"rdma", "legacy"} {
		t.Run(provider, func(t *testing.T) {
			state, out := filepath.Join(t.TempDir(), "state"), filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(bin, "run", "--provider", provider, "--device", "xbfake0", "--workload", wl,
				"--procs", "2", "--threads", "1", "--out", out)
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib, "XRCBENCH_FAKEVERBS_DIR="+state, "XRCBENCH_FAKEVERBS_DEVICES=xbfake0")
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, o.String(), e.String())
			}
			r, err := results.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != "ok" || r.Storm == nil {
				t.Fatalf("status %q (%s), storm %v", r.Status, r.Error, r.Storm)
			}
			st := r.Storm
			if len(st.TeardownNS) != 0 || st.TeardownMethod != "" || !strings.HasPrefix(st.TeardownNote, want) {
				t.Errorf("teardown %v by %q, note %q; want no figure, no method, a note starting %q",
					st.TeardownNS, st.TeardownMethod, st.TeardownNote, want)
			}
		})
	}
}
