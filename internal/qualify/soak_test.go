package qualify

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xrcbench/xrcbench/internal/device"
	"github.com/xrcbench/xrcbench/results"
)

func samplesOf(qps []int, pss []int64) []SoakSample {
	var s []SoakSample
	for i := range max(len(qps), len(pss)) {
		x := SoakSample{AtSec: float64(i + 1), LiveQPs: -1, RSSKB: 100000, PSSKB: 50000}
		if i < len(qps) {
			x.LiveQPs = qps[i]
		}
		if i < len(pss) {
			x.PSSKB = pss[i]
		}
		s = append(s, x)
	}
	return s
}

func TestQPVerdict(t *testing.T) {
	rounds := []int{0, 3, 4, 1, 0, 2, 4, 0, 3, 0, 1, 4, 0, 0, 2, 3, 0, 4, 1, 0, 0, 3, 4, 0, 2, 0, 1, 0, 3, 0}
	leak := make([]int, len(rounds))
	for i, v := range rounds {
		leak[i] = v
		if i >= 12 { // from interval 13 on, two QPs stay behind
			leak[i] += 2
		}
	}
	tests := []struct {
		name    string
		qps     []int
		leaks   *results.LeakCheck
		verdict string
		want    string
	}{
		{"rounds come back to 0", rounds, nil, Pass, "came back to 0 by the end"},
		{"a leak from interval 13", leak, nil, Fail, "above it from part 2 on (intervals 11-20, from 11s), 2 in the last"},
		{"a window inside rounds only is no leak", append([]int{0, 0, 0, 3, 3, 3}, rounds...), nil, Pass, "came back to 0"},
		{"teardown found leaked QPs", rounds, &results.LeakCheck{Checked: true, Method: "sim_inspect", Leaked: []uint32{7}}, Fail, "1 QP(s) outlived the run"},
		{"not sampled", []int{-1, -1, -1, 0, 0, 0, 0, 0}, nil, Skipped, "live QPs not sampled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := QPVerdict(samplesOf(tt.qps, nil), "sim_inspect", tt.leaks)
			if r.Verdict != tt.verdict || !strings.Contains(r.Message, tt.want) {
				t.Errorf("%s: %s, want %s and %q", tt.name, r.Verdict, tt.verdict, tt.want)
				t.Log(r.Message)
			}
		})
	}
}

func TestMemoryVerdict(t *testing.T) {
	flat := []int64{20000, 48000, 50000, 50100, 50000, 50200, 50100, 50300, 50200, 50400, 50300}
	grow := []int64{20000, 48000, 50000, 50100, 52000, 54000, 56000, 58000, 60000, 62000, 64000}
	if r := MemoryVerdict(samplesOf(nil, flat), 10); r.Verdict != Pass {
		t.Errorf("flat after start-up: %s %s", r.Verdict, r.Message)
	}
	if r := MemoryVerdict(samplesOf(nil, grow), 10); r.Verdict != Fail || !strings.Contains(r.Message, "PSS 50000 → 62000 KiB (bound 59096)") {
		t.Errorf("growing: %s %s", r.Verdict, r.Message)
	}
	if r := MemoryVerdict(samplesOf(nil, grow[:4]), 10); r.Verdict != Skipped {
		t.Errorf("too few samples: %s", r.Verdict)
	}
}

func TestDriftVerdict(t *testing.T) {
	steady := []float64{100, 110, 90, 100, 105, 95, 100, 100, 110, 90, 100, 100, 105, 95, 100, 100, 110, 100, 95, 100}
	drifting := make([]float64, len(steady))
	for i, v := range steady {
		drifting[i] = v * (1 + float64(i)/10)
	}
	if r := DriftVerdict(steady, "unreg_last", 50); r.Verdict != Pass {
		t.Errorf("steady: %s %s", r.Verdict, r.Message)
	}
	if r := DriftVerdict(drifting, "unreg_last", 50); r.Verdict != Fail || *r.Value < 100 {
		t.Errorf("drifting: %s %s", r.Verdict, r.Message)
	}
	if r := DriftVerdict(steady[:5], "unreg_last", 50); r.Verdict != Skipped {
		t.Errorf("too short: %s", r.Verdict)
	}
}

// kernelQPs counts what the kernel's RDMA netlink lists for the device
// (fake answers of device.LiveQPs here), as devices counts it; where the
// kernel could not be asked, the soak's QP verdict says why in one line.
func TestKernelQPs(t *testing.T) {
	gsi := device.LiveQP{QPN: 1, Type: "GSI", State: "RTS", Port: 1, KernName: "ib_core"}
	tgt := func(qpn uint32) device.LiveQP {
		return device.LiveQP{QPN: qpn, Type: "XRC_TGT", State: "RTR", PID: 4242}
	}
	noNetlink := &device.NetlinkError{Errno: syscall.EPROTONOSUPPORT,
		Reason: "the kernel has no RDMA netlink (socket NETLINK_RDMA: EPROTONOSUPPORT): ib_core is not loaded"}
	noDevice := &device.NetlinkError{Errno: syscall.ENODEV, Reason: `the kernel's RDMA netlink has no device named "mlx5_9" (it lists mlx5_0)`}
	tests := []struct {
		name    string
		qps     []device.LiveQP
		err     error
		count   int
		method  string
		verdict string // QPVerdict on 20 samples of this answer
		msg     string
	}{
		{"the GSI and two XRC targets", []device.LiveQP{gsi, tgt(0x11), tgt(0x1a2b)}, nil, 3, "netlink", Pass, "live QPs (netlink) came back to 3"},
		{"no QPs at all", nil, nil, 0, "netlink", Pass, "live QPs (netlink) came back to 0"},
		{"no RDMA netlink", nil, noNetlink, -1, "none: " + noNetlink.Reason, Skipped,
			"live QPs not sampled (none: the kernel has no RDMA netlink (socket NETLINK_RDMA: EPROTONOSUPPORT): ib_core is not loaded; 0 sample(s))"},
		{"a device the kernel does not list", nil, noDevice, -1, "none: " + noDevice.Reason, Skipped, `no device named "mlx5_9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, method := kernelQPs(len(tt.qps), tt.err)
			if n != tt.count || method != tt.method {
				t.Fatalf("%d %q, want %d %q", n, method, tt.count, tt.method)
			}
			var sr SoakRun
			for i := range 2 * minPartSamples {
				sr.countedBy(n, method)
				sr.Samples = append(sr.Samples, SoakSample{AtSec: float64(i + 1), LiveQPs: n, RSSKB: 1, PSSKB: 1})
			}
			r := QPVerdict(sr.Samples, sr.QPMethod, nil)
			if r.Verdict != tt.verdict || !strings.Contains(r.Message, tt.msg) || strings.Contains(r.Message, "\n") {
				t.Errorf("%s: %q, want %s and %q in one line", r.Verdict, r.Message, tt.verdict, tt.msg)
			}
		})
	}
}

// A soak run's method names how its counts were read: a failed read's
// reason only while no read has succeeded.
func TestCountedBy(t *testing.T) {
	type read struct {
		n   int
		how string
	}
	tests := []struct {
		name  string
		reads []read
		want  string
	}{
		{"sim", []read{{-1, "sim_inspect"}, {3, "sim_inspect"}}, "sim_inspect"},
		{"never read", []read{{-1, "none: why"}, {-1, "none: why now"}}, "none: why now"},
		{"read once the kernel answered", []read{{-1, "none: why"}, {4, "netlink"}}, "netlink"},
		{"a failed read after counts", []read{{4, "netlink"}, {-1, "none: no answer from the kernel within 5s"}, {2, "netlink"}, {-1, "none: why"}}, "netlink"},
	}
	for _, tt := range tests {
		var sr SoakRun
		for _, r := range tt.reads {
			sr.countedBy(r.n, r.how)
		}
		if sr.QPMethod != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, sr.QPMethod, tt.want)
		}
	}
}

// On rdma and legacy the soak asks the kernel through device.LiveQPs, as
// devices does, and needs no iproute2: an `rdma` on PATH that would
// answer "qp 4" is never run. This machine's kernel answers what it
// answers (no RDMA netlink on most CI machines, or no such device); the
// soak's method carries that answer's reason.
func TestLiveQPsAsksTheKernel(t *testing.T) {
	const dev = "xrcbench-no-such-device"
	bin := t.TempDir()
	ran := filepath.Join(t.TempDir(), "rdma-ran")
	script := "#!/bin/sh\n: >" + ran + "\necho '0: " + dev + ": pd 1 cq 2 qp 4 cm_id 0 mr 0 ctx 0 srq 0'\n"
	if err := os.WriteFile(filepath.Join(bin, "rdma"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	t.Setenv("XRCBENCH_FAKEVERBS_DIR", "")
	_, kerr := device.LiveQPs(dev)
	var ne *device.NetlinkError
	if !errors.As(kerr, &ne) {
		t.Fatalf("device.LiveQPs(%q): %v, want the kernel's reason", dev, kerr)
	}
	for _, provider := range []string{"rdma", "legacy"} {
		n, method := liveQPs(Options{Provider: provider, Device: dev})
		if n != -1 || method != "none: "+kerr.Error() {
			t.Errorf("%s: %d %q, want -1 and %q", provider, n, method, "none: "+kerr.Error())
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("%s: the soak ran iproute2's rdma", provider)
		}
	}
	if n, method := liveQPs(Options{Provider: "rdma"}); n != -1 || !strings.Contains(method, "no --device named") {
		t.Errorf("no device: %d %q", n, method)
	}
	t.Logf("this kernel: %v", kerr)
}
