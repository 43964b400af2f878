package vm

// make vmtest's judge: the checks of issue 16 applied to what the guest
// (a real kernel with soft-RoCE, a real rdma-core) sent back. TestGuest
// runs them on the transcript make vmtest passes with -transcript;
// TestRecordedTranscript runs them on one recorded from a real guest
// (testdata/), so make test keeps them honest without QEMU, and
// TestChecksCatch shows each check fails on a transcript that breaks it.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/conform"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

var transcriptPath = flag.String("transcript", "", "the guest's transcript (make vmtest passes it)")

// device is the soft-RoCE device guest-check.sh adds.
const device = "rxe0"

// setupSteps must all succeed, or nothing after them means anything.
var setupSteps = []string{"host", "kernel", "guest-packages", "modprobe", "dummy-add", "dummy-up", "rxe-add", "ibv_devinfo"}

// check is one claim about the real stack.
type check struct {
	name string
	run  func(tr *transcript) error
}

var checks = []check{
	{"the guest ran every step", checkComplete},
	{"devices --json agrees with ibv_devinfo -v", checkDevicesAgree},
	{"live QPs: devices --json lists rxe0's as rdma resource show qp does", checkLiveQPs},
	{"conform --provider rdma: S11 passes with the real errno", checkConformRDMA},
	{"run --provider rdma: one line naming the device and XRC, exit 1, a failed result", checkRunRDMA},
	{"--provider legacy: the loaded libibverbs has no legacy XRC API", checkLegacy},
}

func (tr *transcript) get(name string) (*step, error) {
	s := tr.steps[name]
	if s == nil && !tr.done && len(tr.order) > 0 {
		return nil, fmt.Errorf("no step %s in the transcript: the guest stopped early, after step %s", name, tr.order[len(tr.order)-1])
	}
	if s == nil {
		return nil, fmt.Errorf("no step %s in the transcript", name)
	}
	return s, nil
}

func checkComplete(tr *transcript) error {
	if !tr.done {
		return fmt.Errorf("the transcript has no XRCVM DONE: the guest stopped early (after %q)", tr.order)
	}
	for _, n := range setupSteps {
		s, err := tr.get(n)
		if err != nil {
			return err
		}
		if s.rc != 0 {
			return fmt.Errorf("step %s exited %d: %s", n, s.rc, strings.TrimSpace(s.errOut))
		}
	}
	return nil
}

// devinfo is ibv_devinfo -v's output for one device: its attributes, and
// each port's.
type devinfo struct {
	attrs map[string]string
	ports []map[string]string
}

// parseDevinfo reads "key: value" lines; a "port: N" line starts a port,
// whose attributes are indented deeper than the device's.
func parseDevinfo(s string) (devinfo, error) {
	d := devinfo{attrs: map[string]string{}}
	portIndent := -1
	for _, line := range strings.Split(s, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(key) == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, "\t "))
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch {
		case key == "port":
			d.ports = append(d.ports, map[string]string{"port": val})
			portIndent = indent
		case portIndent >= 0 && indent > portIndent:
			d.ports[len(d.ports)-1][key] = val
		default:
			portIndent = -1
			d.attrs[key] = val
		}
	}
	if d.attrs["hca_id"] == "" {
		return d, fmt.Errorf("ibv_devinfo output has no hca_id line:\n%s", s)
	}
	return d, nil
}

// number reads ibv_devinfo's numbers: decimal or 0x hex, with an optional
// " (n)" after them.
func number(s string) (uint64, error) {
	s, _, _ = strings.Cut(s, " ")
	return strconv.ParseUint(s, 0, 64)
}

func deviceJSON(tr *transcript) (verbs.DeviceInfo, error) {
	return deviceIn(tr, "devices-json", device)
}

// deviceIn is the device name as the transcript's step of devices --json
// lists it.
func deviceIn(tr *transcript, step, name string) (verbs.DeviceInfo, error) {
	s, err := tr.get(step)
	if err != nil {
		return verbs.DeviceInfo{}, err
	}
	if s.rc != 0 {
		return verbs.DeviceInfo{}, fmt.Errorf("devices --json exited %d: %s", s.rc, s.errOut)
	}
	// The document's devices; a bare array in transcripts recorded
	// before --json documents had their envelope.
	var doc struct {
		Devices []verbs.DeviceInfo `json:"devices"`
	}
	if err := json.Unmarshal([]byte(s.out), &doc); err != nil {
		if err := json.Unmarshal([]byte(s.out), &doc.Devices); err != nil {
			return verbs.DeviceInfo{}, fmt.Errorf("devices --json: %v", err)
		}
	}
	for _, d := range doc.Devices {
		if d.Name == name {
			return d, nil
		}
	}
	return verbs.DeviceInfo{}, fmt.Errorf("devices --json does not list %s: %s", name, s.out)
}

func checkDevicesAgree(tr *transcript) error {
	d, err := deviceJSON(tr)
	if err != nil {
		return err
	}
	s, err := tr.get("ibv_devinfo")
	if err != nil {
		return err
	}
	di, err := parseDevinfo(s.out)
	if err != nil {
		return err
	}
	var bad []string
	differ := func(field string, ours, theirs any) {
		if fmt.Sprint(ours) != fmt.Sprint(theirs) {
			bad = append(bad, fmt.Sprintf("%s: xrcbench %v, ibv_devinfo %v", field, ours, theirs))
		}
	}
	differ("name", d.Name, di.attrs["hca_id"])
	differ("fw_ver", d.FWVer, di.attrs["fw_ver"])
	differ("node_guid", d.NodeGUID, di.attrs["node_guid"])
	differ("hw_ver", d.HWVer, di.attrs["hw_ver"])
	for _, f := range []struct {
		name string
		ours uint64
	}{
		{"vendor_id", uint64(d.VendorID)}, {"vendor_part_id", uint64(d.VendorPartID)},
		{"max_qp", uint64(d.MaxQP)}, {"phys_port_cnt", uint64(d.Ports)},
	} {
		theirs, err := number(di.attrs[f.name])
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: ibv_devinfo %q: %v", f.name, di.attrs[f.name], err))
			continue
		}
		differ(f.name, f.ours, theirs)
	}
	differ("ports listed", d.Ports, len(di.ports))
	// Each port's state, active MTU and link layer: ibv_devinfo prints
	// "PORT_ACTIVE (4)", "1024 (3)", "Ethernet".
	differ("port_info ports", len(d.PortInfo), len(di.ports))
	for i, p := range d.PortInfo {
		if i >= len(di.ports) {
			break
		}
		dp := di.ports[i]
		state, _, _ := strings.Cut(dp["state"], " ")
		mtu, _, _ := strings.Cut(dp["active_mtu"], " ")
		differ(fmt.Sprintf("port %d number", i+1), p.Port, dp["port"])
		differ(fmt.Sprintf("port %d state", p.Port), "PORT_"+p.State, state)
		differ(fmt.Sprintf("port %d active_mtu", p.Port), p.ActiveMTU, mtu)
		differ(fmt.Sprintf("port %d link_layer", p.Port), p.LinkLayer, dp["link_layer"])
	}
	// NUMA node and driver: ibv_devinfo does not print them; the kernel's
	// sysfs is what both read.
	sys, err := sysfsFacts(tr)
	if err != nil {
		return err
	}
	wantNUMA := "-1"
	if v := sys["numa_node"]; v != "absent" {
		wantNUMA = v
	}
	differ("numa_node (sysfs)", d.NUMANode, wantNUMA)
	wantDriver := sys["driver"]
	if wantDriver == "absent" {
		wantDriver = ""
	}
	differ("driver (sysfs)", d.Driver, wantDriver)
	// The binary was built against the host's rdma-core and must say it
	// runs on the guest's.
	if v, err := guestVersion(tr, "libibverbs1"); err != nil {
		bad = append(bad, err.Error())
	} else {
		differ("library", d.Library, "rdma-core "+v)
	}
	// No software device has XRC, so every XRC path must say no.
	if d.XRC || d.OpenQP || d.LegacyAPI {
		bad = append(bad, fmt.Sprintf("xrc %v open_qp %v legacy_api %v: soft-RoCE has no XRC", d.XRC, d.OpenQP, d.LegacyAPI))
	}
	if d.TestDouble {
		bad = append(bad, "marked as the test double: the guest has the real libibverbs")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

// rdmaQP is one QP of `rdma -j resource show qp`.
type rdmaQP struct {
	IfName string `json:"ifname"`
	LQPN   uint32 `json:"lqpn"`
	Type   string `json:"type"`
	State  string `json:"state"`
	PID    int    `json:"pid"`
	Comm   string `json:"comm"`
}

// checkLiveQPs: xrcbench's netlink reader and iproute2's list the same
// QPs for rxe0, taken while nothing changed them: the kernel's own QP 1
// (GSI), and the pingpong server's RC QP when it ran.
func checkLiveQPs(tr *transcript) error {
	d, err := deviceJSON(tr)
	if err != nil {
		return err
	}
	s, err := tr.get("rdma-res-qp-json")
	if err != nil {
		return err
	}
	if s.rc != 0 {
		return fmt.Errorf("rdma -j resource show qp exited %d: %s", s.rc, strings.TrimSpace(s.errOut))
	}
	var all []rdmaQP
	if err := json.Unmarshal([]byte(s.out), &all); err != nil {
		return fmt.Errorf("rdma -j resource show qp: %v: %q", err, s.out)
	}
	var theirs []uint32
	var gsi, user bool
	for _, q := range all {
		if q.IfName != device {
			continue
		}
		theirs = append(theirs, q.LQPN)
		gsi = gsi || (q.LQPN == 1 && q.Type == "GSI")
		user = user || q.PID > 0
	}
	slices.Sort(theirs)
	var bad []string
	if !gsi {
		bad = append(bad, fmt.Sprintf("rdma resource show qp lists no GSI QP 1 for %s: %q", device, s.out))
	}
	if h, _ := tr.get("qp-holder"); h != nil && h.rc == 0 && !user {
		bad = append(bad, "the pingpong server ran, but rdma resource show qp lists no QP of a process")
	}
	switch {
	case d.LiveQPs == nil:
		bad = append(bad, fmt.Sprintf("devices --json has no live_qps for %s: %s", device, d.LiveQPsNote))
	case *d.LiveQPs != len(theirs) || len(d.LiveQPNs) != len(theirs) || !slices.Equal(d.LiveQPNs, theirs):
		bad = append(bad, fmt.Sprintf("xrcbench lists %v QP(s) %v, rdma resource show qp %d %v", *d.LiveQPs, d.LiveQPNs, len(theirs), theirs))
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

// sysfsFacts is the guest's sysfs step: "key value" lines.
func sysfsFacts(tr *transcript) (map[string]string, error) {
	s, err := tr.get("sysfs")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(s.out), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok {
			m[k] = v
		}
	}
	if m["numa_node"] == "" || m["driver"] == "" {
		return nil, fmt.Errorf("sysfs step: %q (exit %d)", s.out, s.rc)
	}
	return m, nil
}

// guestVersion is the upstream version of a guest package (56.1 of
// 56.1-1), from the guest-packages step.
func guestVersion(tr *transcript, pkg string) (string, error) {
	s, err := tr.get("guest-packages")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(s.out, "\n") {
		if name, v, ok := strings.Cut(line, " "); ok && name == pkg {
			v, _, _ = strings.Cut(v, "-")
			return v, nil
		}
	}
	return "", fmt.Errorf("guest-packages does not list %s: %q", pkg, s.out)
}

func checkConformRDMA(tr *transcript) error {
	s, err := tr.get("conform-rdma-json")
	if err != nil {
		return err
	}
	var rep conform.ConformReport
	if err := json.Unmarshal([]byte(s.out), &rep); err != nil {
		return fmt.Errorf("conform --json: %v (exit %d, stderr %s)", err, s.rc, s.errOut)
	}
	var bad []string
	for _, c := range rep.Checks {
		switch {
		case c.ID == "S11":
			if c.Status != conform.CheckPass || !strings.Contains(c.Detail, "EOPNOTSUPP") {
				bad = append(bad, fmt.Sprintf("S11 %s: %s (want pass, EOPNOTSUPP)", c.Status, c.Detail))
			}
		case c.Status != conform.CheckSkip || !strings.Contains(c.Detail, "lacks XRC"):
			bad = append(bad, fmt.Sprintf("%s %s: %s (want skip: the device lacks XRC)", c.ID, c.Status, c.Detail))
		}
	}
	// The table grows (S12 on are the QP-state checks); S1–S11 must all
	// have run, whatever else did.
	seen := map[string]bool{}
	for _, c := range rep.Checks {
		seen[c.ID] = true
	}
	for i := 1; i <= 11; i++ {
		if id := fmt.Sprintf("S%d", i); !seen[id] {
			bad = append(bad, "no check "+id)
		}
	}
	// One check passed and none failed: conform's documented exit 0.
	if s.rc != 0 {
		bad = append(bad, fmt.Sprintf("conform --json exited %d, want 0", s.rc))
	}
	if t, _ := tr.get("conform-rdma"); t == nil || t.rc != s.rc {
		bad = append(bad, "conform without --json exits otherwise than with it")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

// oneLine checks a command that must fail: exit 1, one line on stderr
// containing every want.
func oneLine(s *step, want ...string) []string {
	var bad []string
	if s.rc != 1 {
		bad = append(bad, fmt.Sprintf("exit %d, want 1", s.rc))
	}
	lines := strings.Split(strings.TrimRight(s.errOut, "\n"), "\n")
	if len(lines) != 1 {
		bad = append(bad, fmt.Sprintf("%d lines on stderr, want 1:\n%s", len(lines), s.errOut))
	}
	for _, w := range want {
		if !strings.Contains(s.errOut, w) {
			bad = append(bad, fmt.Sprintf("stderr does not say %q: %s", w, strings.TrimSpace(s.errOut)))
		}
	}
	return bad
}

// failedRun checks a run that must fail at the start: oneLine, and a
// result.json with status failed that still names the device.
func failedRun(tr *transcript, name string, want ...string) error {
	s, err := tr.get(name)
	if err != nil {
		return err
	}
	bad := oneLine(s, want...)
	rs, err := tr.get(name + "-result")
	if err != nil {
		return err
	}
	if rs.rc != 0 {
		bad = append(bad, "no result.json written: "+strings.TrimSpace(rs.errOut))
	} else if r, err := loadResult(rs.out); err != nil {
		bad = append(bad, "result.json: "+err.Error())
	} else {
		if r.Status != results.StatusFailed || r.Error == "" {
			bad = append(bad, fmt.Sprintf("result status %q error %q, want failed with the reason", r.Status, r.Error))
		}
		if d := r.Environment.Device; d == nil || d.Name != device {
			got := "(none)"
			if d != nil {
				got = d.Name
			}
			bad = append(bad, fmt.Sprintf("result's environment.device.name %q, want %s", got, device))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: %s", name, strings.Join(bad, "; "))
	}
	return nil
}

func loadResult(body string) (*results.Result, error) {
	dir, err := os.MkdirTemp("", "xrcbench-vmtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "result.json"), []byte(body), 0o600); err != nil {
		return nil, err
	}
	return results.Load(dir)
}

func checkRunRDMA(tr *transcript) error {
	return failedRun(tr, "run-rdma", device, "XRC")
}

// checkLegacy: rdma-core removed the OFED calls, and both run and conform
// must say so rather than fail somewhere later.
func checkLegacy(tr *transcript) error {
	var bad []string
	for _, name := range []string{"run-legacy", "conform-legacy"} {
		s, err := tr.get(name)
		if err != nil {
			return err
		}
		for _, b := range oneLine(s, "rdma-core, which removed the legacy XRC API") {
			bad = append(bad, name+": "+b)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

func readTranscript(t *testing.T, path string) *transcript {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := parseTranscript(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tr
}

// runChecks applies every check, and logs the versions the guest ran.
func runChecks(t *testing.T, tr *transcript) {
	for _, n := range []string{"host", "kernel", "guest-packages"} {
		if s := tr.steps[n]; s != nil {
			t.Logf("%s: %s", n, strings.TrimSpace(s.out))
		}
	}
	for _, c := range append(slices.Clone(checks), softChecks...) {
		var skip errSoftSkip
		var busy errBusy
		switch err := c.run(tr); {
		case errors.As(err, &skip) && !softRequired(), errors.As(err, &busy):
			t.Logf("SKIP %s: %v", c.name, err)
		case err != nil:
			t.Errorf("FAIL %s: %v", c.name, err)
		default:
			t.Logf("ok   %s", c.name)
		}
	}
}

var update = flag.Bool("update", false, "with -transcript: record it as testdata/transcript.txt once its checks pass")

const recorded = "testdata/transcript.txt"

func TestGuest(t *testing.T) {
	if *transcriptPath == "" {
		t.Skip("no -transcript: make vmtest boots the guest and passes one")
	}
	tr := readTranscript(t, *transcriptPath)
	readHostLoad(t)
	if testing.Verbose() {
		for _, n := range tr.order {
			s := tr.steps[n]
			t.Logf("step %s: exit %d\n%s%s", n, s.rc, s.out, s.errOut)
		}
	}
	runChecks(t, tr)
	if *update && !t.Failed() {
		b, err := os.ReadFile(*transcriptPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(recorded, b, 0o644); err != nil {
			t.Fatal(err)
		}
		load := fmt.Sprintf("%.2f %d\n", hostLoad.avg, hostLoad.cpus)
		if err := os.WriteFile(recordedLoad, []byte(load), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// recordedLoad is the host's load when the recorded transcript was made:
// its timing is judged as it was then.
const recordedLoad = "testdata/host-load.txt"

// readHostLoad takes the host's load over the guest's life just ended:
// the larger of the 1- and 5-minute load averages.
func readHostLoad(t *testing.T) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		t.Logf("no /proc/loadavg (%v): timing judged as on a quiet host", err)
		return
	}
	for _, v := range strings.Fields(string(b))[:2] {
		if x, err := strconv.ParseFloat(v, 64); err == nil && x > hostLoad.avg {
			hostLoad.avg = x
		}
	}
	hostLoad.cpus = runtime.NumCPU()
	t.Logf("host load average %.2f on %d CPUs", hostLoad.avg, hostLoad.cpus)
}

// TestRecordedTranscript: the checks pass on what a real guest (Debian
// trixie, kernel 6.12, rdma-core 56.1, soft-RoCE) answered, recorded by
// make vmtest with -update.
func TestRecordedTranscript(t *testing.T) {
	hostLoad.avg, hostLoad.cpus = 0, 0
	if b, err := os.ReadFile(recordedLoad); err == nil {
		if _, err := fmt.Sscan(string(b), &hostLoad.avg, &hostLoad.cpus); err != nil {
			t.Fatalf("%s: %v", recordedLoad, err)
		}
	}
	runChecks(t, readTranscript(t, recorded))
}

// TestChecksCatch: each check fails on a transcript that breaks its claim,
// made by changing one thing in the recorded one.
func TestChecksCatch(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, tr *transcript)
		check  string // the check that must fail, by name prefix
		says   string // what its error must say
	}{
		{"guest cut short", func(_ *testing.T, tr *transcript) { tr.done = false }, "the guest ran", "XRCVM DONE"},
		{"rxe not added", func(_ *testing.T, tr *transcript) { tr.steps["rxe-add"].rc = 1 }, "the guest ran", "rxe-add exited 1"},
		{"fw_ver differs", edit("devices-json", `"fw_ver": "0.0.0"`, `"fw_ver": "0.0.1"`), "devices", "fw_ver"},
		{"max_qp differs", edit("devices-json", `"max_qp": 1048560`, `"max_qp": 1048576`), "devices", "max_qp"},
		{"node_guid differs", edit("devices-json", `"node_guid": "`, `"node_guid": "f`), "devices", "node_guid"},
		{"a second port", edit("devices-json", `"ports": 1`, `"ports": 2`), "devices", "phys_port_cnt"},
		{"XRC claimed", edit("devices-json", `"xrc": false`, `"xrc": true`), "devices", "soft-RoCE has no XRC"},
		{"NUMA node invented", edit("sysfs", "numa_node absent", "numa_node 0"), "devices", "numa_node"},
		{"driver invented", edit("sysfs", "driver absent", "driver rdma_rxe"), "devices", "driver"},
		{"the build host's rdma-core", edit("devices-json", `"library": "rdma-core 56.1"`, `"library": "rdma-core 44.0"`), "devices", "library"},
		{"rxe0 not listed", edit("devices-json", `"name": "rxe0"`, `"name": "rxe1"`), "devices", "does not list rxe0"},
		{"port state differs", edit("devices-json", `"state": "ACTIVE"`, `"state": "DOWN"`), "devices --json agrees", "port 1 state"},
		{"active MTU differs", edit("devices-json", `"active_mtu": 1024`, `"active_mtu": 4096`), "devices --json agrees", "port 1 active_mtu"},
		{"link layer differs", edit("devices-json", `"link_layer": "Ethernet"`, `"link_layer": "InfiniBand"`), "devices --json agrees", "port 1 link_layer"},
		{"live QP count differs", edit("devices-json", `"live_qps": 2`, `"live_qps": 3`), "live QPs", "xrcbench lists 3 QP(s)"},
		{"a live QP missing", edit("devices-json", "\"live_qpns\": [\n        1,\n", "\"live_qpns\": [\n        2,\n"), "live QPs", "xrcbench lists 2 QP(s) [2 17]"},
		{"no live QPs", edit("devices-json", `"live_qps": 2`, `"live_qps_note": "n/a: x"`), "live QPs", "no live_qps"},
		{"no GSI", edit("rdma-res-qp-json", `"lqpn":1,"type":"GSI"`, `"lqpn":1,"type":"UD"`), "live QPs", "no GSI QP 1"},
		{"no process's QP", edit("rdma-res-qp-json", `"pid":`, `"xpid":`), "live QPs", "no QP of a process"},
		{"S11 failed", edit("conform-rdma-json", "\"status\": \"pass\",\n      \"detail\"", "\"status\": \"fail\",\n      \"detail\""), "conform", "S11 fail"},
		{"S11 missing", edit("conform-rdma-json", `"id": "S11"`, `"id": "S11x"`), "conform", "no check S11"},
		{"S11 another errno", edit("conform-rdma-json", "fails with EOPNOTSUPP", "fails with ENOSYS"), "conform", "want pass, EOPNOTSUPP"},
		{"conform exit status", func(_ *testing.T, tr *transcript) { tr.steps["conform-rdma-json"].rc = 1 }, "conform", "exited 1, want 0"},
		{"run exits 0", func(_ *testing.T, tr *transcript) { tr.steps["run-rdma"].rc = 0 }, "run --provider rdma", "exit 0, want 1"},
		{"run says more than one line", func(_ *testing.T, tr *transcript) {
			tr.steps["run-rdma"].errOut = "goroutine 1 [running]:\n" + tr.steps["run-rdma"].errOut
		},
			"run --provider rdma", "2 lines on stderr"},
		{"run does not name the device", edit("run-rdma", "device rxe0 lacks", "device lacks"), "run --provider rdma", `does not say "rxe0"`},
		{"result not failed", edit("run-rdma-result", `"status": "failed"`, `"status": "partial"`), "run --provider rdma", `status "partial"`},
		{"result without the device", edit("run-rdma-result", `"name": "rxe0"`, `"name": ""`), "run --provider rdma", "environment.device.name"},
		{"no result", func(_ *testing.T, tr *transcript) { tr.steps["run-rdma-result"].rc = 1 }, "run --provider rdma", "no result.json"},
		{"legacy vague", edit("run-legacy", "rdma-core, which removed the legacy XRC API", "not available"), "--provider legacy", "run-legacy"},
		{"legacy conform vague", edit("conform-legacy", "rdma-core, which removed the legacy XRC API", "not available"), "--provider legacy", "conform-legacy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := readTranscript(t, recorded)
			tt.change(t, tr)
			found := false
			for _, c := range append(slices.Clone(checks), softChecks...) {
				if !strings.HasPrefix(c.name, tt.check) {
					continue
				}
				found = true
				err := c.run(tr)
				if err == nil || !strings.Contains(err.Error(), tt.says) {
					t.Errorf("check %q: %v, want an error saying %q", c.name, err, tt.says)
				}
			}
			if !found {
				t.Fatalf("no check named %q...", tt.check)
			}
		})
	}
}

// edit replaces old with new in a step's stdout or stderr. Where old is
// not there the case fails: a change that changes nothing would make it
// pass for nothing.
func edit(step, old, new string) func(t *testing.T, tr *transcript) {
	return func(t *testing.T, tr *transcript) {
		t.Helper()
		s := tr.steps[step]
		switch {
		case s == nil:
			t.Fatalf("no step %s", step)
		case strings.Contains(s.out, old):
			s.out = strings.Replace(s.out, old, new, 1)
		case strings.Contains(s.errOut, old):
			s.errOut = strings.Replace(s.errOut, old, new, 1)
		default:
			t.Fatalf("step %s does not contain %q", step, old)
		}
	}
}

func TestParseTranscript(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name, in string
		err      string // "" for success
		out      string // step a's stdout on success
	}{
		{"whole", "XRCVM START\r\nkernel noise\nXRCVM STEP a 3\nXRCVM BEGIN a.out\n" + b64("hi\n") + "\nXRCVM END a.out\nXRCVM DONE\n", "", "hi\n"},
		{"cut short", "XRCVM STEP a 0\nXRCVM BEGIN a.out\n" + b64("hi"), "not closed", ""},
		{"bad base64", "XRCVM STEP a 0\nXRCVM BEGIN a.out\n!!\nXRCVM END a.out\n", "section a.out", ""},
		{"frame inside a section", "XRCVM STEP a 0\nXRCVM BEGIN a.out\nXRCVM STEP b 0\n", "inside section a.out", ""},
		{"step twice", "XRCVM STEP a 0\nXRCVM STEP a 1\n", "step a twice", ""},
		{"section before its step", "XRCVM BEGIN a.out\n\nXRCVM END a.out\n", "before its STEP", ""},
		{"unknown frame", "XRCVM HELLO\n", "unknown frame", ""},
		{"exit status not a number", "XRCVM STEP a x\n", "exit status", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := parseTranscript(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tr.done || tr.steps["a"] == nil || tr.steps["a"].rc != 3 || tr.steps["a"].out != tt.out {
				t.Errorf("got done %v steps %+v", tr.done, tr.steps["a"])
			}
		})
	}
}
