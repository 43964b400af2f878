package device

import (
	"os"
	"path/filepath"

	"github.com/xrcbench/xrcbench/verbs"
)

// How CountQPs counted a device's QPs.
const (
	BySimInspect    = "sim_inspect"    // the sim device's own table (verbs.InspectSim)
	ByDoubleInspect = "double_inspect" // the libibverbs test double's sim device
	ByNetlink       = "netlink"        // the kernel's list (RDMA netlink, as devices reads it)
)

// CountQPs counts the QPs device name holds now, whatever the provider,
// and says how (By...): a sim device (its folder simDir) and the
// libibverbs test double's devices are inspected, being none of the
// kernel's; a real device is counted from the kernel's list of its QPs,
// every one it lists, the device's own GSI included, as devices counts
// them. err says why the count could not be read.
func CountQPs(provider, name, simDir string) (n int, method string, err error) {
	if provider == "sim" {
		snap, err := verbs.InspectSim(simDir)
		return len(snap.QPs), BySimInspect, err
	}
	if dir := doubleDir(name); dir != "" {
		// Asking the kernel about the double's device would only say it
		// has no such device.
		snap, err := verbs.InspectSim(dir)
		return len(snap.QPs), ByDoubleInspect, err
	}
	qps, err := LiveQPs(name)
	return len(qps), ByNetlink, err
}

// doubleDir is the folder of the test double's sim device name, where the
// double keeps its state (XRCBENCH_FAKEVERBS_DIR, verbs/fakeverbs); ""
// when no double is configured or no device is named.
func doubleDir(name string) string {
	dir := os.Getenv("XRCBENCH_FAKEVERBS_DIR")
	if dir == "" || name == "" {
		return ""
	}
	return filepath.Join(dir, name)
}
