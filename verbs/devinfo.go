package verbs

// What the rdma and legacy providers know about a device, turned into a
// DeviceInfo, and the one-line errors they give when a device cannot be
// used. Plain Go: the cgo files hand over a devFacts and nothing else;
// what the host's files add (sysfs, the library file) is internal/facts'.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/xrcbench/xrcbench/internal/facts"
)

// devFacts mirrors struct xb_devfacts (rdma_facts.h).
type devFacts struct {
	Name, DevName, IBDevPath, FWVer string
	NodeGUID                        uint64
	VendorID, VendorPartID, HWVer   uint32
	CapFlags                        uint32
	MaxQP, Ports                    int
	Queried                         bool
	OpenErrno                       syscall.Errno
	XRC                             bool
	OpenXRCD, CreateQPEx, OpenQP    bool
	// What each probe call returned (rdma.c, probe_caps): 0 success,
	// else its errno; probeNotTried when it could not run.
	OpenXRCDProbe, CreateQPExProbe, OpenQPProbe syscall.Errno
	LegacyAPI                                   bool
	// KnowsOps is false when the facts came through the legacy dlsym
	// path, which cannot call the upstream XRC ops.
	KnowsOps bool
	// PortFacts: each port's query (struct xb_portfacts), port p at [p-1].
	PortFacts []portFacts
	// WantPort and WantGID are the port and GID index the user asked
	// for (Options.Port, Options.GIDIndex; 0 and -1 when automatic).
	WantPort, WantGID int
}

// asked records the port and GID index opts asks for, for the error.
func (f devFacts) asked(opts Options) devFacts {
	f.WantPort, f.WantGID = opts.Port, opts.wantGID()
	return f
}

// portFacts mirrors struct xb_portfacts (rdma_facts.h): the verbs enums.
type portFacts struct {
	Queried                     bool
	State, ActiveMTU, LinkLayer int
}

// portInfo names a port's facts as ibv_devinfo does (without its PORT_
// prefix on the state).
func (p portFacts) portInfo(port int) PortInfo {
	states := []string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}
	in := PortInfo{Port: port, State: fmt.Sprintf("state%d", p.State)}
	if p.State >= 0 && p.State < len(states) {
		in.State = states[p.State]
	}
	if p.ActiveMTU >= 1 && p.ActiveMTU <= 5 {
		in.ActiveMTU = 128 << p.ActiveMTU // enum ibv_mtu: 1 is 256 bytes, 5 is 4096
	}
	switch p.LinkLayer {
	case 0, 1: // unset (before OFED 1.5.2, which only knew InfiniBand) or InfiniBand
		in.LinkLayer = "InfiniBand"
	case 2:
		in.LinkLayer = "Ethernet"
	default:
		in.LinkLayer = fmt.Sprintf("link_layer%d", p.LinkLayer)
	}
	return in
}

// probeNotTried is XB_PROBE_NOT_TRIED (rdma_facts.h).
const probeNotTried = syscall.Errno(^uintptr(0))

// probeQPN is XB_PROBE_QPN (rdma_facts.h).
const probeQPN = 0xffffff

// capabilities says, per upstream XRC call, whether it works and how that
// was established: by calling it (the op pointers cannot tell, libibverbs
// fills missing ones with EOPNOTSUPP stubs).
func (f devFacts) capabilities() []Capability {
	if !f.KnowsOps || !f.Queried {
		return nil
	}
	verdict := func(call string, e syscall.Errno, ok bool, success string) Capability {
		switch {
		case e == probeNotTried:
			return Capability{How: "not probed: no scratch XRC domain to try it in"}
		case e == 0:
			return Capability{Supported: true, How: success}
		case ok:
			return Capability{Supported: true, How: fmt.Sprintf("%s failed %s, not EOPNOTSUPP: the provider implements it", call, errnoName(e))}
		}
		return Capability{How: fmt.Sprintf("%s failed %s: the provider does not implement it", call, errnoName(e))}
	}
	caps := []Capability{
		verdict("ibv_open_xrcd of a scratch domain (an anonymous file)", f.OpenXRCDProbe, f.OpenXRCD,
			"ibv_open_xrcd opened a scratch domain (an anonymous file)"),
		verdict("ibv_create_qp_ex(IBV_QPT_XRC_RECV) in the scratch domain", f.CreateQPExProbe, f.CreateQPEx,
			"ibv_create_qp_ex(IBV_QPT_XRC_RECV) created a QP in the scratch domain"),
		verdict(fmt.Sprintf("ibv_open_qp of QP number %#x (no QP has it) in the scratch domain", probeQPN), f.OpenQPProbe, f.OpenQP,
			fmt.Sprintf("ibv_open_qp of QP number %#x succeeded in the scratch domain", probeQPN)),
	}
	for i, name := range []string{"open_xrcd", "create_qp_ex", "open_qp"} {
		caps[i].Name = name
	}
	if f.OpenXRCDProbe == probeNotTried {
		caps[0].How = "not probed: no anonymous file (memfd_create failed) for a scratch domain"
	}
	return caps
}

// info turns the facts into a DeviceInfo; library is the file libibverbs
// was loaded from.
func (f devFacts) info(library string) DeviceInfo {
	in := DeviceInfo{
		Name:         f.Name,
		XRC:          f.XRC,
		FWVer:        f.FWVer,
		VendorID:     f.VendorID,
		VendorPartID: f.VendorPartID,
		MaxQP:        f.MaxQP,
		Ports:        f.Ports,
		NUMANode:     -1,
		TestDouble:   facts.IsTestDouble(library),
		Extra:        map[string]string{},
	}
	in.Library = facts.LibraryVersion(library, in.TestDouble)
	if f.Queried {
		in.HWVer = fmt.Sprintf("%#x", f.HWVer)
		in.Extra["device_cap_flags"] = fmt.Sprintf("%#08x", f.CapFlags)
	}
	if f.NodeGUID != 0 {
		in.NodeGUID = formatGUID(f.NodeGUID)
	}
	in.OpenQP = f.KnowsOps && f.XRC && f.OpenXRCD && f.CreateQPEx && f.OpenQP
	in.Capabilities = f.capabilities()
	in.LegacyAPI = f.LegacyAPI && f.XRC
	if !f.KnowsOps {
		in.Extra["open_qp"] = "unknown: rdma provider " + rdmaUnavailable()
	}
	if f.DevName != "" {
		in.Extra["uverbs"] = "/dev/infiniband/" + f.DevName
	}
	if library != "" {
		in.Extra["libibverbs"] = library
	}
	if !f.Queried && f.OpenErrno != 0 {
		in.Extra["error"] = openFailure(f, f.OpenErrno)
	}
	for i, p := range f.PortFacts {
		if p.Queried {
			pi := p.portInfo(i + 1)
			var err error
			if pi.GIDs, err = facts.ReadGIDs(f.sysfsDir(), i+1); err != nil {
				pi.GIDsNote = "n/a: " + err.Error()
			}
			in.PortInfo = append(in.PortInfo, pi)
		}
	}
	in.sysfsDir = f.sysfsDir()
	s := facts.ReadSysfs(f.sysfsDir())
	in.Driver, in.NUMANode = s.Driver, s.NUMA
	for k, v := range s.Extra {
		in.Extra[k] = v
	}
	in.BOM = facts.BOM(f.sysfsDir())
	if f.FWVer != "" {
		in.BOM.FWVer = f.FWVer // libibverbs' answer, as fw_ver above
	}
	facts.LibraryBOM(in.BOM, library, in.Library)
	if in.TestDouble {
		in.BOM.TestDoubleCost = facts.TestDoubleCost()
	}
	return in
}

func (f devFacts) sysfsDir() string {
	if f.IBDevPath != "" {
		return f.IBDevPath
	}
	if f.Name == "" {
		return ""
	}
	return filepath.Join(facts.ClassDir, f.Name)
}

// formatGUID writes a GUID as ibv_devinfo does: 0002:c903:0010:a4b2.
func formatGUID(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48&0xffff, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// deviceError is an open failure with one clear line of text; it still
// matches its errno (and ErrNotSupported where that fits) with errors.Is.
type deviceError struct {
	msg          string
	errno        syscall.Errno
	notSupported bool
	badPath      bool // the user's --ib-port or --gid-index
	badName      bool // the user's --device: no device has that name
	noOpenQP     bool // XRC, but the provider has no ibv_open_qp
}

func (e *deviceError) Error() string { return e.msg }

func (e *deviceError) Unwrap() []error {
	switch {
	case e.noOpenQP:
		return []error{e.errno, ErrNotSupported, ErrNoOpenQP}
	case e.notSupported:
		return []error{e.errno, ErrNotSupported}
	case e.badPath:
		return []error{e.errno, ErrBadPath}
	case e.badName:
		return []error{e.errno, ErrNoSuchDevice}
	}
	return []error{e.errno}
}

// The stages of enum xb_open_stage (rdma_facts.h).
const (
	stageOK = iota
	stageList
	stageNoDev
	stageNotFound
	stageOpen
	stageQuery
	stageNoXRC
	stageNoOpenQP
	stageNoXRCAny
	stageNoSym
	stagePort
	stageNoAddr
	stageINI
	stageBadPort
	stageBadGID
)

// openError explains why a provider could not open a device: provider is
// "rdma" or "legacy", f the facts of the device it got to, all (may be
// nil) every device, to name the alternatives.
func openError(provider string, stage int, errno syscall.Errno, f devFacts, all []devFacts) error {
	e := &deviceError{errno: errno}
	switch stage {
	case stageList:
		e.msg = fmt.Sprintf("no RDMA device found: libibverbs could not list devices: %s (%s)",
			errno.Error(), errnoName(errno))
		if errno == syscall.ENOSYS {
			e.msg += ": the kernel has no RDMA support loaded (no /sys/class/infiniband_verbs); load ib_uverbs and the adapter's driver (e.g. mlx5_ib)"
		}
		e.notSupported = true
	case stageNoDev:
		e.msg = "no RDMA device found: libibverbs lists none; is the adapter's driver loaded (ibv_devices lists what libibverbs sees)?"
		e.notSupported = true
	case stageNotFound:
		e.badName = true
		e.msg = fmt.Sprintf("no RDMA device named %q", f.Name)
		if names := deviceNames(all); names != "" {
			e.msg += " (have " + names + ")"
		}
	case stageOpen, stageQuery:
		e.msg = openFailure(f, errno)
	case stageNoXRC:
		e.msg = fmt.Sprintf("device %s lacks XRC: IBV_DEVICE_XRC is not in its device_cap_flags", f.Name)
		e.notSupported = true
	case stageNoXRCAny:
		e.msg = "no RDMA device with XRC (IBV_DEVICE_XRC in device_cap_flags)"
		if names := deviceNames(all); names != "" {
			e.msg += ": have " + names
		}
		e.notSupported = true
	case stageNoOpenQP:
		e.msg = fmt.Sprintf("device %s has XRC, but its rdma-core provider (driver %s) does not implement %s "+
			"(the call failed EOPNOTSUPP), so no process can register with an XRC receive QP through the upstream API; "+
			"rdma-core's mlx4 and mlx5 providers implement it", f.Name, orUnknown(facts.ReadSysfs(f.sysfsDir()).Driver), missingCall(f))
		e.notSupported = true
		e.noOpenQP = missingCall(f) == "ibv_open_qp"
	case stageNoSym:
		e.msg = "the legacy XRC API is not available: " + f.Name
		e.notSupported = true
	case stagePort:
		if f.WantPort > 0 {
			e.msg = fmt.Sprintf("device %s: port %d is %s, not ACTIVE (--ib-port %d): choose an ACTIVE port (%s; xrcbench devices lists them)",
				f.Name, f.WantPort, f.portState(f.WantPort), f.WantPort, f.activePorts())
			e.badPath = true
			break
		}
		e.msg = fmt.Sprintf("device %s has no ACTIVE port (%s): --qp-state rtr needs a port with a link to give each QP a loopback address; use --qp-state init", f.Name, errnoName(errno))
	case stageNoAddr:
		e.msg = fmt.Sprintf("device %s: its port has no address (no LID on InfiniBand, no GID on RoCE; %s): --qp-state rtr needs one for each QP's loopback path; use --qp-state init", f.Name, errnoName(errno))
	case stageINI:
		e.msg = fmt.Sprintf("device %s: cannot make the local XRC send QP (and its PD and CQ) whose number --qp-state rtr gives each receive QP as destination: %s (%s); use --qp-state init", f.Name, errno.Error(), errnoName(errno))
	case stageBadPort:
		e.msg = fmt.Sprintf("device %s has no port %d (--ib-port %d): its ports are 1 to %d", f.Name, f.WantPort, f.WantPort, max(f.Ports, 1))
		e.badPath = true
	case stageBadGID:
		e.msg = fmt.Sprintf("device %s: --gid-index %d is past the GID table of its port or an empty entry%s: xrcbench devices lists each port's GIDs",
			f.Name, f.WantGID, f.gidTableNote())
		e.badPath = true
	default:
		e.msg = fmt.Sprintf("%s: cannot open a device: %s", provider, errno.Error())
	}
	return e
}

// portState names port p's state as devices prints it ("unknown" when
// it was not queried).
func (f devFacts) portState(p int) string {
	if p < 1 || p > len(f.PortFacts) || !f.PortFacts[p-1].Queried {
		return "in an unknown state"
	}
	return f.PortFacts[p-1].portInfo(p).State
}

// activePorts lists the ACTIVE ports, for an error that asks for one.
func (f devFacts) activePorts() string {
	var act []string
	for i, p := range f.PortFacts {
		if p.Queried && p.State == 4 { // IBV_PORT_ACTIVE
			act = append(act, strconv.Itoa(i+1))
		}
	}
	if len(act) == 0 {
		return "it has none"
	}
	return "ACTIVE: " + strings.Join(act, ", ")
}

// gidTableNote says which entries the chosen port's table has, from sysfs.
func (f devFacts) gidTableNote() string {
	port := f.WantPort
	if port == 0 {
		port = 1
		for i, p := range f.PortFacts {
			if p.Queried && p.State == 4 {
				port = i + 1
				break
			}
		}
	}
	gids, err := facts.ReadGIDs(f.sysfsDir(), port)
	if err != nil || len(gids) == 0 {
		return fmt.Sprintf(" (port %d)", port)
	}
	var idx []string
	for _, g := range gids {
		idx = append(idx, strconv.Itoa(g.Index))
	}
	return fmt.Sprintf(" (port %d has entries %s)", port, strings.Join(idx, ", "))
}

// openFailure explains a device that libibverbs lists but cannot open.
func openFailure(f devFacts, errno syscall.Errno) string {
	file := "/dev/infiniband/" + orUnknown(f.DevName)
	switch errno {
	case syscall.EACCES, syscall.EPERM:
		return fmt.Sprintf("cannot open %s for device %s: permission denied; give this user read-write access to it "+
			"(e.g. add the user to the group that owns it, often rdma, or a udev rule) or run as root", file, f.Name)
	case syscall.ENOENT, syscall.ENODEV, syscall.ENXIO:
		return fmt.Sprintf("cannot open %s for device %s: %s; is ib_uverbs loaded?", file, f.Name, errno.Error())
	case syscall.EEXIST:
		// No kernel returns EEXIST for a uverbs open; the libibverbs test
		// double does, for a state folder whose device is in use with
		// other settings, and says so in a line of its own.
		return fmt.Sprintf("cannot open device %s: EEXIST: the libibverbs test double's state folder holds this "+
			"device in use with other settings (its line above says which)", f.Name)
	}
	if f.Queried || f.OpenErrno == 0 {
		return fmt.Sprintf("cannot open device %s (%s): %s", f.Name, file, errno.Error())
	}
	return fmt.Sprintf("cannot open or query device %s (%s): %s (%s)", f.Name, file, errno.Error(), errnoName(errno))
}

func deviceNames(all []devFacts) string {
	var parts []string
	for _, f := range all {
		p := f.Name
		switch {
		case !f.Queried:
			p += " (cannot be opened)"
		case !f.XRC:
			p += " (no XRC)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// missingCall names the upstream call a device with XRC lacks.
func missingCall(f devFacts) string {
	if f.KnowsOps && f.OpenQP && !f.CreateQPEx {
		return "ibv_create_qp_ex(IBV_QPT_XRC_RECV)"
	}
	return "ibv_open_qp"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Devices lists every RDMA device libibverbs reports, opening each to
// query it. A device that cannot be opened is listed with the reason in
// Extra["error"]. With no device at all, the error says why in one line.
// It is the cgo half of device.Devices, which adds what the kernel lists
// of each device's QPs.
func Devices() ([]DeviceInfo, error) {
	facts, lib, err := listDevices()
	if err != nil {
		return nil, err
	}
	if len(facts) == 0 {
		return nil, openError("", stageNoDev, syscall.ENODEV, devFacts{}, nil)
	}
	out := make([]DeviceInfo, 0, len(facts))
	syms := legacySymbols()
	var flavor, flavorWhy string
	if syms != "" {
		flavor, flavorWhy = legacyFlavor()
	}
	for _, f := range facts {
		in := f.info(lib)
		in.Provider = listProvider()
		if f.LegacyAPI && syms != "" {
			in.Extra["legacy_symbols"] = syms
			in.LegacyFlavor = flavor
			in.Extra["legacy_flavor_evidence"] = flavorWhy
		}
		out = append(out, in)
	}
	return out, nil
}

// errListFailed turns a failed device list (a negative errno from C) into
// the "no RDMA device found" error.
func errListFailed(rc int) error {
	return openError("", stageList, syscall.Errno(-rc), devFacts{}, nil)
}
