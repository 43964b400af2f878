// Package facts reads what the host's files say about an RDMA device:
// its class directory in sysfs (driver, NUMA node, PCI address, GID
// table, the bill of materials' adapter facts), its driver module, and
// the libibverbs file it was opened through (rdma-core's release, or the
// test double, recognised by a symbol only it exports).
//
// It is plain Go with no cgo and no knowledge of the providers: verbs
// reads these facts when a provider opens or lists a device, beside what
// libibverbs itself answers, so that the providers' package keeps to the
// providers and their hot path. Missing files leave a fact unknown (or,
// in the bill of materials, say in one word why it is not there); nothing
// here fails.
package facts
