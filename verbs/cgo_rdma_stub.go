//go:build !rdma || !cgo

package verbs

import "syscall"

// Without the rdma tag (or without cgo) the rdma provider is known but
// unavailable, so `xrcbench list` and `--provider rdma` say what to do.

// RDMABuilt says whether this binary has the rdma provider compiled in.
const RDMABuilt = false

var rdmaProvider = &provider{ProviderInfo: ProviderInfo{Name: "rdma",
	Description: "rdma-core's upstream XRC API (ibv_open_xrcd, ibv_create_qp_ex, ibv_open_qp, ibv_destroy_qp)",
	Reason:      RDMANotBuilt}}

// The kernel calls without the harness's guards exist with the rdma
// provider only (cgo_rdma.go).
func rdmaKernelCloseXRCD(*Domain) syscall.Errno { return syscall.ENOSYS }

func rdmaKernelUnreg(*Domain, uint32) (syscall.Errno, bool) { return syscall.ENOSYS, false }

func rdmaDomainHandles(*Domain) int { return 0 }

// listDevices lists devices through the legacy dlsym path, which needs no
// header (cgo_rdma.go: through rdma-core, in a build with them).
func listDevices() ([]devFacts, string, error) { return legacyList() }

// listProvider names the provider whose calls listDevices makes.
const listProvider = "legacy"
