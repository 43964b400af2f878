package main

import (
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testdouble"
)

// Random bytes over the double's sim device, past its header (issue 23,
// item 10): the device opens, and the scratch domain of the capability
// probes cannot; that was reported as a provider that does not implement
// ibv_open_qp (EOPNOTSUPP). It is a damaged device, and said so.
func TestRunDoubleDeviceScribbled(t *testing.T) {
	judgesNoTime(t)
	lib := testdouble.LibDir(t)
	bin := rdmaBinary(t)
	state := filepath.Join(t.TempDir(), "state")
	env := testdouble.Env(lib, state, "xbfake0")
	run := func() (int, string) {
		cmd := exec.Command(bin, "run", "--quiet", "--provider", "rdma", "--device", "xbfake0", "--qp-state", "init",
			"--duration", "200ms", "--warmup", "0s", "--out", filepath.Join(t.TempDir(), "run"))
		cmd.Env = env
		code, _, stderr := runProcess(cmd)
		return code, stderr
	}
	if code, stderr := run(); code != exitOK { // the device made
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dev := filepath.Join(state, "xbfake0", "sim.dev")
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	// Past the first page (the header and geometry, which the open
	// checks): the tables of registrants, domains and handles after it.
	rng := rand.New(rand.NewPCG(1, 2))
	if _, err := f.Seek(4096, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, st.Size()-4096)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	if _, err := f.Write(buf); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, stderr := run()
	if code != exitFailed || strings.Contains(stderr, "EOPNOTSUPP") || !strings.Contains(stderr, "damaged") {
		t.Errorf("exit %d, stderr %q: want exit %d naming a damaged device, not a missing ibv_open_qp", code, stderr, exitFailed)
	}
}
