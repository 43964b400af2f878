package device

// Firmware command counters of mlx5 adapters, from debugfs. The kernel
// driver times every firmware command it issues and keeps, per command,
// the number issued and their mean duration in nanoseconds:
//
//	/sys/kernel/debug/mlx5/<pci>/commands/<COMMAND>/{n,average}
//
// A snapshot before and one after a run give the firmware's own time of a
// create (CREATE_QP), of the moves to INIT and RTR a modify issues
// (RST2INIT_QP, INIT2RTR_QP), and of a destroy (2RST_QP for a QP not in
// RESET, then DESTROY_QP) over the run, within the error the integer
// average leaves, beside the latency measured in user space. debugfs is root-only and mounted on most hosts; where it
// is not readable the snapshot says why, and the result should say so too.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/internal/regfile"
	"github.com/xrcbench/xrcbench/verbs"
)

// FWCommands are the firmware commands a snapshot reads: those of the
// life of an XRC receive QP, in its order.
var FWCommands = []string{"CREATE_QP", "RST2INIT_QP", "INIT2RTR_QP", "2RST_QP", "DESTROY_QP"}

// debugfsRoot is where debugfs is mounted; tests point it elsewhere.
var debugfsRoot = "/sys/kernel/debug"

// FWCommand is one command's counters at one moment.
type FWCommand struct {
	N         uint64 `json:"n"`          // commands issued since the driver loaded (or the counter was reset)
	AverageNS uint64 `json:"average_ns"` // their mean duration
	// Failures are the command's failure counters; nil where the kernel
	// keeps none (mlx5 has them since 2022: older kernels have n and
	// average only).
	Failures *FWFailures `json:"failures,omitempty"`
}

// FWFailures are mlx5's failure counters of one command, as debugfs.c
// lays them out beside n and average: failed counts every failure,
// failed_mbox_status those the firmware answered with a bad mailbox
// status (the driver's -EREMOTEIO); the last_failed_* files keep the
// last failure's errno (positive), mailbox status and syndrome (the
// firmware's own reason code, printed 0x%08x; absent on the kernels that
// had the counters before it).
type FWFailures struct {
	Failed           uint64  `json:"failed"`
	FailedMboxStatus uint64  `json:"failed_mbox_status"`
	LastErrno        uint64  `json:"last_failed_errno"`
	LastMboxStatus   uint64  `json:"last_failed_mbox_status"`
	LastSyndrome     *uint64 `json:"last_failed_syndrome,omitempty"`
}

// FWSnapshot is the firmware command counters of one device at one moment.
type FWSnapshot struct {
	Device   string               `json:"device"`
	Dir      string               `json:"dir,omitempty"` // debugfs directory of the device's commands
	Taken    time.Time            `json:"taken"`
	Commands map[string]FWCommand `json:"commands,omitempty"`
	// NotReadable says why there are no counters ("not readable: ...");
	// empty when Commands holds every command of FWCommands whose
	// directory exists.
	NotReadable string `json:"not_readable,omitempty"`
}

// SnapshotFWCommands reads the mlx5 firmware command counters of the
// device info describes (as returned by Device.Info or Devices). It never
// fails: when the counters cannot be read, NotReadable says why.
func SnapshotFWCommands(info verbs.DeviceInfo) FWSnapshot {
	root := debugfsRoot
	if info.TestDouble {
		// The libibverbs test double plays the kernel: its debugfs
		// (devices with the flag mlx5) sits in its state folder beside
		// its sysfs, <state>/sysfs/class/infiniband/<name>.
		if dir, ok := strings.CutSuffix(info.SysfsDir(), filepath.Join("sysfs", "class", "infiniband", info.Name)); ok && info.Name != "" {
			root = filepath.Join(dir, "debugfs")
		}
	}
	return snapshotFWCommands(root, info)
}

func snapshotFWCommands(root string, info verbs.DeviceInfo) FWSnapshot {
	s := FWSnapshot{Device: info.Name, Taken: time.Now()}
	pci := info.Extra["pci"]
	switch {
	case info.Driver != "" && info.Driver != "mlx5_core":
		s.NotReadable = fmt.Sprintf("not readable: driver %s has no mlx5 firmware command counters", info.Driver)
		return s
	case pci == "":
		s.NotReadable = "not readable: the device's PCI address is unknown (no sysfs device link)"
		return s
	}
	s.Dir = filepath.Join(root, "mlx5", pci, "commands")
	if _, err := os.Stat(s.Dir); err != nil {
		s.NotReadable = "not readable: " + whyNotReadable(err)
		return s
	}
	cmds := map[string]FWCommand{}
	for _, name := range FWCommands {
		// A kernel that keeps statistics only of the commands it has
		// issued has no directory for one never issued: left out here,
		// it counts from zero once it appears (FWCommandsSince).
		if _, err := os.Stat(filepath.Join(s.Dir, name)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		var c FWCommand
		var err error
		if c.N, err = readUint(filepath.Join(s.Dir, name, "n")); err == nil {
			c.AverageNS, err = readUint(filepath.Join(s.Dir, name, "average"))
		}
		if err == nil {
			c.Failures, err = readFailures(filepath.Join(s.Dir, name))
		}
		if err != nil {
			s.NotReadable = "not readable: " + whyNotReadable(err)
			return s
		}
		cmds[name] = c
	}
	if len(cmds) == 0 {
		s.NotReadable = fmt.Sprintf("not readable: %s holds none of %s", s.Dir, strings.Join(FWCommands, ", "))
		return s
	}
	s.Commands = cmds
	return s
}

// readFailures reads a command's failure counters from its directory:
// nil, and no error, where the kernel has no "failed" file (a kernel
// older than the counters); the syndrome is left nil where only it is
// missing.
func readFailures(dir string) (*FWFailures, error) {
	var f FWFailures
	var err error
	if f.Failed, err = readUint(filepath.Join(dir, "failed")); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	for _, c := range []struct {
		file string
		v    *uint64
	}{{"failed_mbox_status", &f.FailedMboxStatus}, {"last_failed_errno", &f.LastErrno}, {"last_failed_mbox_status", &f.LastMboxStatus}} {
		if err == nil {
			*c.v, err = readUint(filepath.Join(dir, c.file))
		}
	}
	if err != nil {
		return nil, err
	}
	// debugfs_create_x32: "0x%08x".
	switch syn, err := readUintBase(filepath.Join(dir, "last_failed_syndrome"), 0); {
	case err == nil:
		f.LastSyndrome = &syn
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	return &f, nil
}

// readUint reads a debugfs counter: a regular file of at most a page.
func readUint(path string) (uint64, error) { return readUintBase(path, 10) }

// readUintBase reads a counter in base (0: as its prefix says, 0x for
// debugfs's x32 files).
func readUintBase(path string, base int) (uint64, error) {
	b, err := regfile.ReadFile(path, regfile.MaxAttr)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), base, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", path, strings.TrimSpace(string(b)))
	}
	return v, nil
}

func whyNotReadable(err error) string {
	var pe *os.PathError
	switch {
	case errors.Is(err, os.ErrPermission):
		return "permission denied on " + pathOf(err) + " (debugfs is root-only; run as root to get firmware command times)"
	case errors.Is(err, os.ErrNotExist):
		return pathOf(err) + " does not exist (debugfs not mounted at " + debugfsRoot + ", or a kernel without mlx5 command statistics)"
	case errors.As(err, &pe):
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

func pathOf(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	return "debugfs"
}

// FWCommandDelta is what the firmware did for one command between two
// snapshots.
type FWCommandDelta struct {
	N      uint64  `json:"n"`
	MeanNS float64 `json:"mean_ns"` // mean duration of the N commands in between
	// ErrNS bounds MeanNS's error from the kernel's integer average: each
	// snapshot's sum is only known to within its count of ns, so the
	// true mean lies in (MeanNS - n_before/N, MeanNS + n_after/N). With a
	// driver that has run many commands before, it can dwarf the mean.
	ErrNS float64 `json:"err_ns"`
	// Failures says how many of the command failed in between, and how
	// the last one did when any did; nil where the kernel keeps no
	// failure counters.
	Failures *FWFailureDelta `json:"failures,omitempty"`
}

// FWFailureDelta is a command's failures between two snapshots.
type FWFailureDelta struct {
	Failed           uint64 `json:"failed"`
	FailedMboxStatus uint64 `json:"failed_mbox_status"`
	// Last is the after snapshot's counters, whose last_failed_* say how
	// the last failure went; nil when none failed in between (the
	// files then still hold a failure from before the run).
	Last *FWFailures `json:"last,omitempty"`
}

// FWDelta compares two snapshots of one device.
type FWDelta struct {
	Device      string                    `json:"device"`
	Commands    map[string]FWCommandDelta `json:"commands,omitempty"`
	NotReadable string                    `json:"not_readable,omitempty"`
}

// FWCommandsSince is the firmware's work between before and after. The
// kernel keeps a running mean, so the mean in between is recovered from
// the sums: (avg_after*n_after - avg_before*n_before) / (n_after - n_before).
// A counter that went backwards (reset by a write to "average", or a
// driver reload) makes the delta not readable rather than wrong.
func FWCommandsSince(before, after FWSnapshot) FWDelta {
	d := FWDelta{Device: after.Device}
	switch {
	case before.NotReadable != "":
		d.NotReadable = before.NotReadable
		return d
	case after.NotReadable != "":
		d.NotReadable = after.NotReadable
		return d
	}
	d.Commands = map[string]FWCommandDelta{}
	for name, a := range after.Commands {
		// A command first issued during the run may have its counters
		// only since: it counts from zero.
		b := before.Commands[name]
		if a.N < b.N {
			d.Commands = nil
			d.NotReadable = fmt.Sprintf("not readable: the %s counter was reset during the run", name)
			return d
		}
		c := FWCommandDelta{N: a.N - b.N}
		if a.Failures != nil {
			var bf FWFailures
			if b.Failures != nil {
				bf = *b.Failures
			}
			if a.Failures.Failed < bf.Failed || a.Failures.FailedMboxStatus < bf.FailedMboxStatus {
				d.Commands = nil
				d.NotReadable = fmt.Sprintf("not readable: the %s failure counter was reset during the run", name)
				return d
			}
			c.Failures = &FWFailureDelta{Failed: a.Failures.Failed - bf.Failed, FailedMboxStatus: a.Failures.FailedMboxStatus - bf.FailedMboxStatus}
			if c.Failures.Failed > 0 {
				last := *a.Failures
				c.Failures.Last = &last
			}
		}
		if c.N > 0 {
			sum := float64(a.AverageNS)*float64(a.N) - float64(b.AverageNS)*float64(b.N)
			c.MeanNS = max(sum/float64(c.N), 0)
			c.ErrNS = float64(max(a.N, b.N)) / float64(c.N)
		}
		d.Commands[name] = c
	}
	return d
}

// Environment renders the delta as flat key/value pairs for a result's
// environment: "fw_cmd.DESTROY_QP.n", "fw_cmd.DESTROY_QP.mean_ns",
// "fw_cmd.DESTROY_QP.err_ns", or "fw_cmd" = "not readable: ...".
func (d FWDelta) Environment() map[string]string {
	if d.NotReadable != "" {
		return map[string]string{"fw_cmd": d.NotReadable}
	}
	m := map[string]string{}
	for name, c := range d.Commands {
		m["fw_cmd."+name+".n"] = strconv.FormatUint(c.N, 10)
		m["fw_cmd."+name+".mean_ns"] = strconv.FormatFloat(c.MeanNS, 'f', 0, 64)
		if c.N > 0 {
			m["fw_cmd."+name+".err_ns"] = strconv.FormatFloat(math.Ceil(c.ErrNS), 'f', 0, 64)
		}
	}
	return m
}
