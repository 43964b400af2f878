//go:build rdma

package verbs

// The rdma provider's cgo wrappers: rdma-core's upstream XRC API, linked
// against libibverbs. Built with the tag rdma (make adds it when
// <infiniband/verbs.h> exists).

/*
#cgo LDFLAGS: -libverbs -ldl
#include <stdlib.h>
#include "rdma.h"
*/
import "C"

import (
	"syscall"
	"unsafe"
)

// RDMABuilt says whether this binary has the rdma provider compiled in.
const RDMABuilt = true

func rdmaLibrary() string {
	var buf [512]C.char
	C.xb_rdma_library(&buf[0], C.size_t(len(buf)))
	return C.GoString(&buf[0])
}

func rdmaOpen(opts Options) (*Device, error) {
	name := C.CString(opts.Device)
	defer C.free(unsafe.Pointer(name))
	var h unsafe.Pointer
	var f C.struct_xb_devfacts
	var stage C.int
	if rc := C.xb_rdma_open(name, C.int(opts.QPState), C.int(opts.Port), C.int(opts.wantGID()), &h, &f, &stage); rc != 0 {
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
	switch n := int(C.xb_rdma_count()); {
	case n < 0:
		return false, errListFailed(n).Error()
	case n == 0:
		return false, openError("rdma", stageNoDev, syscall.ENODEV, devFacts{}, nil).Error()
	}
	return true, ""
}

var rdmaProvider = &provider{ProviderInfo: ProviderInfo{Name: "rdma",
	Description: "rdma-core's upstream XRC API (ibv_open_xrcd, ibv_create_qp_ex, ibv_open_qp, ibv_destroy_qp)"},
	open: rdmaOpen, probe: rdmaProbe}

// listDevices lists devices through rdma-core (cgo_rdma_stub.go: through
// the legacy dlsym path, in a build without the headers).
func listDevices() ([]devFacts, string, error) { return rdmaList() }

// listProvider names the provider whose calls listDevices makes.
const listProvider = "rdma"
