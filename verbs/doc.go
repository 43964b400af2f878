// Package verbs is the provider layer of xrcbench and its cgo hot path: it
// opens a device through a provider, opens XRC domains from files, creates
// XRC receive QPs, registers and unregisters them, and runs timed batches
// of those operations in C.
//
// # Providers
//
//   - sim: an XRC device emulated in file-backed shared memory, with the
//     exact semantics S1–S15 of docs/design.md in three modes (Legacy,
//     LegacyMlnx, Upstream)
//     and an optional cost model (Cost). Separate processes that open the
//     same directory share one device, and domain files are shared by
//     inode, as the kernel shares XRC domains.
//   - null: every operation succeeds at once; it measures the harness.
//   - rdma: rdma-core's upstream API (ibv_open_xrcd, ibv_create_qp_ex,
//     ibv_open_qp, ibv_destroy_qp), in every cgo build: libibverbs.so.1 is
//     loaded on first use (ibvload.c, one handle shared with legacy) and
//     its calls resolved with dlvsym against the ABI ibv_abi.h declares,
//     which verbs/ctest/abi_check.c holds to rdma-core's header.
//   - legacy: the legacy API (ibv_reg_xrc_rcv_qp ...), resolved with dlsym,
//     as OFED 1.x (FlavorOFED1) or MLNX_OFED's compatibility layer
//     (FlavorMlnxCompat) implements it: DeviceInfo.LegacyFlavor says which.
//
// # Registrants
//
// A Device is one opened device context: one registrant. Each benchmark
// thread opens its own, so that in the legacy API, where registration is
// idempotent per registrant, threads of one process never undo each
// other's registrations. In the upstream API a registrant holds one handle
// per open; that bookkeeping stays inside this package, so both semantics
// read the same to callers: Reg and Unreg take a QP number. The exception
// is MLNX_OFED's legacy layer (LegacyMlnx), where the process is the
// registrant (DeviceInfo.Registrant): there a second Device of the same
// process is no new registrant, and its Reg of a QP the process holds is
// EEXIST.
//
// # The hot path
//
// Go never calls C once per operation. Domain.RunProgram hands C a Program,
// an array of steps (op, QP, expected outcome, intended start in an open
// loop) built ahead of time, and C runs it with chained timestamps (the end
// of one operation is the start of the next), counting each step's latency
// into its tag's histogram arrays (Program.Rec) and keeping the errno of
// only the steps whose outcome was unexpected: one cgo call per program,
// whatever its length and whatever the QP count, nothing per operation
// left for Go, no allocation. Domain.RunBatch is the older form,
// one op kind over a list of QPs, kept for the single operations and the
// conformance checks. Every provider is a table of C functions
// (struct xb_ops in xb.h) behind that one loop. Domain.RunStorm runs a
// storm rank's program (storm.c): its steps served in plan order as each
// arrives, a registration once its QP number is in a table the ranks
// share.
//
// # Errors
//
// Errors are *OpError values wrapping a syscall.Errno, so
// errors.Is(err, syscall.EINVAL) works for every provider, and they name
// the operation, the QP number and the domain.
//
// # Files
//
// cgo is confined to the cgo_*.go files; the C sources are xb.h and
// batch.c (the loop, the clock and an open loop's schedule, which
// arrivals.go draws alike in Go), storm.c, null.c, sim.h and sim.c (also linked
// into the libibverbs test double in fakeverbs/), rdma*.c and legacy*.c.
// Without cgo (CGO_ENABLED=0) nocgo.go stands in for the cgo_*.go files,
// as the standard library's net and os/user do: the package builds, every
// provider is known and unavailable (NoCgo), and CgoBuilt is false, so
// the analysis half of xrcbench builds where there is no C compiler.
//
// # Not here
//
// Its one concern is the providers and the hot path. Discovery around a
// device (the kernel's live QPs through RDMA netlink, the firmware
// counters in debugfs, live QPs for every provider) is package device;
// the conformance checks S1–S15 are package conform. Both stand on verbs
// through the smallest hooks: Devices (the providers' device list),
// InspectSim, and KillRegistrant with MaybeRunChild (a child registrant).
package verbs
