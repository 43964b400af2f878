//go:build cgo

package verbs

// The legacy provider's cgo wrappers. Built everywhere: the legacy C side
// finds libibverbs at run time with dlopen/dlsym and needs no header.

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "legacy.h"
*/
import "C"

import (
	"syscall"
	"unsafe"

	"github.com/xrcbench/xrcbench/internal/facts"
)

// maxDevices bounds a device listing; hosts have a handful.
const maxDevices = 64

// factsFromC copies struct xb_devfacts. Shared by the rdma cgo file: C
// types are one per package.
func factsFromC(f *C.struct_xb_devfacts, knowsOps bool) devFacts {
	var ports []portFacts
	for i := 0; i < int(f.phys_port_cnt) && i < len(f.ports); i++ {
		p := f.ports[i]
		ports = append(ports, portFacts{Queried: p.queried != 0, State: int(p.state), ActiveMTU: int(p.active_mtu), LinkLayer: int(p.link_layer)})
	}
	return devFacts{
		PortFacts:    ports,
		Name:         C.GoString(&f.name[0]),
		DevName:      C.GoString(&f.dev_name[0]),
		IBDevPath:    C.GoString(&f.ibdev_path[0]),
		FWVer:        C.GoString(&f.fw_ver[0]),
		NodeGUID:     uint64(f.node_guid),
		VendorID:     uint32(f.vendor_id),
		VendorPartID: uint32(f.vendor_part_id),
		HWVer:        uint32(f.hw_ver),
		CapFlags:     uint32(f.device_cap_flags),
		MaxQP:        int(f.max_qp),
		Ports:        int(f.phys_port_cnt),
		Queried:      f.queried != 0,
		OpenErrno:    syscall.Errno(f.open_errno),
		XRC:          f.xrc != 0,
		OpenXRCD:     f.open_xrcd != 0,
		CreateQPEx:   f.create_qp_ex != 0,
		OpenQP:       f.open_qp != 0,
		// -1 (XB_PROBE_NOT_TRIED) becomes probeNotTried.
		OpenXRCDProbe:   syscall.Errno(uintptr(int64(f.open_xrcd_probe))),
		CreateQPExProbe: syscall.Errno(uintptr(int64(f.create_qp_ex_probe))),
		OpenQPProbe:     syscall.Errno(uintptr(int64(f.open_qp_probe))),
		LegacyAPI:       f.legacy_api != 0,
		KnowsOps:        knowsOps,
	}
}

// pathFromC is the port and GID an opened device chose (struct
// xb_devfacts' path_* fields), nil when it chose none.
func pathFromC(f *C.struct_xb_devfacts) *PathInfo {
	if f.path_port == 0 {
		return nil
	}
	p := &PathInfo{Port: int(f.path_port), PortChosen: f.path_port_chosen != 0,
		GIDIndex: int(f.path_gid_index), GIDChosen: f.path_gid_chosen != 0}
	if p.GIDIndex >= 0 {
		var gid [16]byte
		for i := range gid {
			gid[i] = byte(f.path_gid[i])
		}
		p.GID, p.GIDType = facts.FormatGID(gid), facts.GIDTypeName(int(f.path_gid_type))
	}
	return p
}

// legacyProbe says whether the loaded libibverbs exports the legacy XRC API.
func legacyProbe() (bool, string) {
	var why [256]C.char
	if C.xb_legacy_probe(&why[0], C.size_t(len(why))) != 0 {
		return false, C.GoString(&why[0])
	}
	return true, ""
}

// legacySymbols names the legacy XRC symbols the loaded libibverbs exports,
// each with the symbol version it is bound at; "" when it has none.
func legacySymbols() string {
	var buf [512]C.char
	C.xb_legacy_symvers(&buf[0], C.size_t(len(buf)))
	return C.GoString(&buf[0])
}

// The libraries that implement the legacy XRC API (legacy_abi.h), as
// xb_legacy_flavor names them.
const (
	// FlavorOFED1: OFED 1.x libibverbs, the calls reaching the kernel
	// through the driver's ibv_more_ops; a registration belongs to the
	// context (uverbs file).
	FlavorOFED1 = "ofed1"
	// FlavorMlnxCompat: MLNX_OFED 2.x-4.x, the calls a compatibility
	// layer over the upstream ones with one table of QPs per process; the
	// process is the registrant.
	FlavorMlnxCompat = "mlnx-compat"
	// FlavorUnknown: the evidence fits neither; the provider refuses it.
	FlavorUnknown = "unknown"
)

// legacyFlavor is the flavor of the loaded libibverbs and the evidence it
// was decided by; the first call probes a device with XRC.
func legacyFlavor() (string, string) {
	var why [512]C.char
	fl := C.xb_legacy_flavor(&why[0], C.size_t(len(why)))
	names := map[C.int]string{C.XB_LEGACY_OFED1: FlavorOFED1, C.XB_LEGACY_MLNX_COMPAT: FlavorMlnxCompat}
	name, ok := names[fl]
	if !ok {
		name = FlavorUnknown
	}
	return name, C.GoString(&why[0])
}

// legacyDecide is the flavor rule alone (xb_legacy_decide), for its tests:
// compatExports, whether the upstream command calls are exported; probe,
// what the second reg answered (-1: no probe ran).
func legacyDecide(compatExports bool, probe int) (string, string) {
	var why [512]C.char
	exp := C.int(0)
	if compatExports {
		exp = 1
	}
	fl := C.xb_legacy_decide(exp, C.int(probe), &why[0], C.size_t(len(why)))
	names := map[C.int]string{C.XB_LEGACY_OFED1: FlavorOFED1, C.XB_LEGACY_MLNX_COMPAT: FlavorMlnxCompat}
	name, ok := names[fl]
	if !ok {
		name = FlavorUnknown
	}
	return name, C.GoString(&why[0])
}

func legacyLibrary() string {
	var buf [512]C.char
	C.xb_legacy_library(&buf[0], C.size_t(len(buf)))
	return C.GoString(&buf[0])
}

func legacyOpen(opts Options) (*Device, error) {
	if ok, why := legacyProbe(); !ok {
		return nil, &deviceError{msg: "the legacy XRC API (ibv_reg_xrc_rcv_qp) is not available: " + why,
			errno: syscall.ENOSYS, notSupported: true}
	}
	flavor, why := legacyFlavor()
	if flavor == FlavorUnknown {
		return nil, &deviceError{msg: "the legacy XRC API's library is neither OFED 1.x nor MLNX_OFED's compatibility layer, " +
			"so what a registration means is unknown: " + why, errno: syscall.ENOTSUP, notSupported: true}
	}
	name := C.CString(opts.Device)
	defer C.free(unsafe.Pointer(name))
	var h unsafe.Pointer
	var f C.struct_xb_devfacts
	var stage C.int
	if rc := C.xb_legacy_open(name, C.int(opts.QPState), C.int(opts.Port), C.int(opts.wantGID()), &h, &f, &stage); rc != 0 {
		var all []devFacts
		if s := int(stage); s == stageNotFound || s == stageNoXRCAny {
			all, _, _ = legacyList()
		}
		return nil, openError("legacy", int(stage), syscall.Errno(rc), factsFromC(&f, false).asked(opts), all)
	}
	info := factsFromC(&f, false).info(legacyLibrary())
	info.Path = pathFromC(&f)
	info.Semantics, info.Registrant = string(Legacy), RegistrantContext
	if flavor == FlavorMlnxCompat {
		info.Semantics, info.Registrant = string(LegacyMlnx), RegistrantProcess
	}
	info.LegacyFlavor = flavor
	info.Extra["legacy_flavor_evidence"] = why
	info.LegacyAPI = info.XRC
	return &Device{ops: unsafe.Pointer(&C.xb_legacy_ops), handle: h, info: info}, nil
}

// legacyList lists devices through the dlsym path.
func legacyList() ([]devFacts, string, error) {
	facts := make([]C.struct_xb_devfacts, maxDevices)
	n := int(C.xb_legacy_list(&facts[0], C.int(len(facts))))
	if n < 0 {
		if syscall.Errno(-n) == syscall.ENOENT {
			_, why := legacyProbe() // the loader's line: the library, why, its package
			return nil, "", &deviceError{msg: "no RDMA device found: " + why, errno: syscall.ENOENT, notSupported: true}
		}
		return nil, "", errListFailed(n)
	}
	out := make([]devFacts, 0, n)
	for i := 0; i < n && i < len(facts); i++ {
		out = append(out, factsFromC(&facts[i], false))
	}
	return out, legacyLibrary(), nil
}
