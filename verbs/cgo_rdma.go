//go:build cgo

package verbs

// The rdma provider's cgo wrappers: rdma-core's upstream XRC API. Built in
// every cgo build: the C side loads libibverbs.so.1 on first use
// (ibvload.c) against the ABI it declares itself (ibv_abi.h), so it needs
// neither rdma-core's headers to build nor its library to start.

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "rdma.h"
*/
import "C"

import (
	"syscall"
	"unsafe"
)

// rdmaLoad loads libibverbs and resolves the provider's calls (once per
// process): 0, or ENOENT (no library) or ENOSYS (a call is missing) with
// the one line that says so.
func rdmaLoad() (syscall.Errno, string) {
	var why [512]C.char
	if rc := C.xb_rdma_load(&why[0], C.size_t(len(why))); rc != 0 {
		return syscall.Errno(rc), C.GoString(&why[0])
	}
	return 0, ""
}

// errRDMALoad is the error for a provider that cannot load its library:
// the one line, unsupported (not a failed measurement).
func errRDMALoad(e syscall.Errno, why string) error {
	return &deviceError{msg: why, errno: e, notSupported: true}
}

// rdmaUnavailable says why the rdma provider's facts are missing from a
// listing that had to go through the legacy calls.
func rdmaUnavailable() string {
	if e, why := rdmaLoad(); e != 0 {
		return "unavailable: " + why
	}
	return "unavailable"
}

func rdmaLibrary() string {
	var buf [512]C.char
	C.xb_rdma_library(&buf[0], C.size_t(len(buf)))
	return C.GoString(&buf[0])
}

func rdmaOpen(opts Options) (*Device, error) {
	if e, why := rdmaLoad(); e != 0 {
		return nil, errRDMALoad(e, why)
	}
	name := C.CString(opts.Device)
	defer C.free(unsafe.Pointer(name))
	var h unsafe.Pointer
	var f C.struct_xb_devfacts
	var stage C.int
	allow := C.int(0)
	if opts.AllowNoOpenQP {
		allow = 1
	}
	if rc := C.xb_rdma_open(name, C.int(opts.QPState), C.int(opts.Port), C.int(opts.wantGID()), allow, &h, &f, &stage); rc != 0 {
		var all []devFacts
		if s := int(stage); s == stageNotFound || s == stageNoXRCAny {
			all, _, _ = rdmaList()
		}
		return nil, openError("rdma", int(stage), syscall.Errno(rc), factsFromC(&f, true).asked(opts), all)
	}
	info := factsFromC(&f, true).info(rdmaLibrary())
	info.Path = pathFromC(&f)
	info.Semantics = string(Upstream)
	return &Device{ops: unsafe.Pointer(&C.xb_rdma_ops), handle: h, info: info}, nil
}

func rdmaList() ([]devFacts, string, error) {
	facts := make([]C.struct_xb_devfacts, maxDevices)
	n := int(C.xb_rdma_list(&facts[0], C.int(len(facts))))
	if n < 0 {
		return nil, "", errListFailed(n)
	}
	out := make([]devFacts, 0, n)
	for i := 0; i < n && i < len(facts); i++ {
		out = append(out, factsFromC(&facts[i], true))
	}
	return out, rdmaLibrary(), nil
}

// rdmaKernelCloseXRCD calls ibv_close_xrcd on m's XRCD with its handles
// held, without the harness's EBUSY guard: the kernel's answer.
func rdmaKernelCloseXRCD(m *Domain) syscall.Errno {
	return syscall.Errno(C.xb_rdma_kernel_close_xrcd(m.handle))
}

// rdmaKernelUnreg destroys a handle to qpn that m's device context holds
// through any domain, without the harness's per-domain guard; called is
// false when the context holds none, so no call was made.
func rdmaKernelUnreg(m *Domain, qpn uint32) (e syscall.Errno, called bool) {
	rc := int(C.xb_rdma_kernel_unreg(m.handle, C.uint32_t(qpn)))
	return syscall.Errno(max(rc, 0)), rc >= 0
}

// rdmaDomainHandles is how many QP handles the registrant holds in m.
func rdmaDomainHandles(m *Domain) int { return int(C.xb_rdma_dom_handles(m.handle)) }

// rdmaProbe: the provider is usable where libibverbs lists a device. It
// opens none, so listing providers stays cheap on a real host.
func rdmaProbe() (bool, string) {
	if e, why := rdmaLoad(); e != 0 {
		return false, why
	}
	switch n := int(C.xb_rdma_count()); {
	case n < 0:
		return false, errListFailed(n).Error()
	case n == 0:
		return false, openError("rdma", stageNoDev, syscall.ENODEV, devFacts{}, nil).Error()
	}
	return true, ""
}

// listDevices lists devices through rdma-core's calls, or through the
// legacy ones when the loaded libibverbs is an old one that lacks some of
// rdma-core's (an OFED 1.x library); with no libibverbs at all it fails
// with the one line naming the library and its package.
func listDevices() ([]devFacts, string, error) {
	switch e, why := rdmaLoad(); e {
	case 0:
		return rdmaList()
	case syscall.ENOSYS:
		return legacyList()
	default:
		return nil, "", errRDMALoad(e, "no RDMA device found: "+why)
	}
}

// listProvider names the provider whose calls listDevices makes.
func listProvider() string {
	if e, _ := rdmaLoad(); e == syscall.ENOSYS {
		return "legacy"
	}
	return "rdma"
}
