package host

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/device"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// Environment describes the machine, the build and the device.
func Environment(info verbs.DeviceInfo) results.Environment {
	env := results.Environment{
		CPUs:      runtime.NumCPU(),
		GoVersion: runtime.Version(),
		Version:   Version(),
		Provider:  info.Provider,
		CPUModel:  cpuModel(),
	}
	env.Host, _ = os.Hostname()
	var u unix.Utsname
	release := ""
	if unix.Uname(&u) == nil {
		release = unix.ByteSliceToString(u.Release[:])
		env.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + release +
			" " + unix.ByteSliceToString(u.Machine[:])
	}
	env.BOM = newBOM(info, release)
	if info.Name != "" {
		env.Device = deviceFacts(info)
	}
	if len(info.Extra) > 0 {
		env.ProviderDetail = map[string]string{}
		for k, v := range info.Extra {
			env.ProviderDetail[k] = v
		}
		// The sim device's directory is the run's private one, removed at
		// the end: not something to rerun with.
		delete(env.ProviderDetail, "dir")
	}
	return env
}

// deviceFacts is the result's typed copy of the provider's device info.
func deviceFacts(info verbs.DeviceInfo) *results.Device {
	d := &results.Device{Name: info.Name, XRC: info.XRC, NUMANode: info.NUMANode, TestDouble: info.TestDouble,
		Semantics: info.Semantics, FWVer: info.FWVer, HWVer: info.HWVer, NodeGUID: info.NodeGUID,
		Driver: info.Driver, Library: info.Library, VendorID: info.VendorID, VendorPartID: info.VendorPartID,
		MaxQP: info.MaxQP, LegacyFlavor: info.LegacyFlavor, Registrant: info.Registrant}
	if p := info.Path; p != nil { // the port and GID QPs were moved through
		d.Port = p.Port
		if p.GIDIndex >= 0 {
			gi := p.GIDIndex
			d.GIDIndex, d.GID, d.GIDType = &gi, p.GID, p.GIDType
		}
	}
	return d
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// buildVersion, when set at link time, names the build:
//
//	go build -ldflags "-X github.com/xrcbench/xrcbench/internal/host.buildVersion=$(git describe --always --dirty)"
//
// It is for builds where Go's own VCS stamping is off (-buildvcs=false).
var buildVersion string

// Version names the build: the version given at link time; else the
// module's release version from Go's build information (go install
// github.com/xrcbench/xrcbench/cmd/xrcbench@v1.2.3 gives "v1.2.3", as
// does a build of a checkout at that tag); else the VCS revision it was
// built from, "+dirty" when the tree had changes; else the module's
// pseudo-version (go install ...@<commit>); else "unknown".
func Version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(buildVersion, bi)
}

// pseudoVersion matches the tail of a Go pseudo-version (a commit's
// time and revision: v0.0.0-20260102150405-abcdef012345), which names a
// commit, not a release.
var pseudoVersion = regexp.MustCompile(`[-.]\d{14}-[0-9a-f]{12}(\+dirty)?$`)

// versionOf is Version for the link-time version linked and the build
// information bi (nil when the binary has none).
func versionOf(linked string, bi *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	rev, dirty, module := stampOf(bi)
	released := module != "" && module != "(devel)" && !pseudoVersion.MatchString(module)
	switch {
	case released:
		return module
	case rev != "":
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		return rev
	case module != "" && module != "(devel)":
		return module
	}
	return "unknown"
}

// vcsStamp is what Go stamped into the binary: the VCS revision (full),
// whether the tree had changes, and the module's version ("" when the
// binary carries no build information).
func vcsStamp() (rev string, dirty bool, module string) {
	bi, _ := debug.ReadBuildInfo()
	return stampOf(bi)
}

func stampOf(bi *debug.BuildInfo) (rev string, dirty bool, module string) {
	if bi == nil {
		return "", false, ""
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty, bi.Main.Version
}

// Firmware snapshots an adapter's own command counters (mlx5 debugfs)
// around a run, so the result can set the firmware's own CREATE_QP and
// DESTROY_QP times beside the latency measured from user space. The window
// is the whole run, not the measured one: no share is derived from it.
type Firmware struct {
	Info   verbs.DeviceInfo // the device opened for the snapshot (the run refuses one without XRC before it starts)
	before device.FWSnapshot
	Taken  bool // a snapshot was taken: a real adapter that opened
}

// SnapshotFirmware takes the "before" snapshot on real adapters; the sim
// and null providers have no firmware.
func SnapshotFirmware(vo verbs.Options) *Firmware {
	if vo.Provider != "rdma" && vo.Provider != "legacy" {
		return &Firmware{}
	}
	dev, err := verbs.Open(vo)
	if err != nil {
		return &Firmware{} // the run itself will say why the device does not open
	}
	info := dev.Info()
	dev.Close()
	return &Firmware{Info: info, before: device.SnapshotFWCommands(info), Taken: true}
}

// Record sets the environment's firmware command counts and mean times
// over the run, or why they are not readable.
func (f *Firmware) Record(env *results.Environment) {
	if !f.Taken {
		return
	}
	delta := device.FWCommandsSince(f.before, device.SnapshotFWCommands(f.Info))
	fw := &results.FirmwareCounters{NotReadable: delta.NotReadable}
	if len(delta.Commands) > 0 {
		fw.Commands = map[string]results.FirmwareCommand{}
		for name, c := range delta.Commands {
			fc := results.FirmwareCommand{N: c.N, MeanNS: c.MeanNS, ErrNS: c.ErrNS}
			if f := c.Failures; f != nil {
				fc.Failures = &results.FirmwareFailures{Failed: f.Failed, FailedMboxStatus: f.FailedMboxStatus}
				if l := f.Last; l != nil {
					fc.Failures.LastErrno, fc.Failures.LastMboxStatus = l.LastErrno, l.LastMboxStatus
					if l.LastSyndrome != nil {
						fc.Failures.LastSyndrome = fmt.Sprintf("0x%08x", *l.LastSyndrome)
					}
				}
			}
			fw.Commands[name] = fc
		}
	}
	env.Firmware = fw
}
