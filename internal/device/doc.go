// Package device is discovery: what the system says about RDMA devices
// beyond what a provider's open reports. It lists the devices with the
// kernel's own count and numbers of each one's QPs (Devices), reads that
// list through RDMA netlink in plain Go (LiveQPs, LiveQPsAll: what "rdma
// resource show qp" prints), counts a device's live QPs whatever the
// provider (CountQPs: the sim's and the libibverbs test double's devices
// inspected, a real one asked of the kernel), and reads the mlx5 firmware
// command counters from debugfs (SnapshotFWCommands, FWCommandsSince).
//
// It stands on verbs (the providers, which open devices through cgo) and
// never the other way round: verbs.Devices and verbs.InspectSim are the
// hooks it calls into the cgo half. What an opened device reports of
// itself (verbs.DeviceInfo) is assembled by the provider that opened it,
// from libibverbs' answers and the host's files that internal/facts reads.
package device
