package results

// BOM is the bill of materials a release attachment needs: what measured,
// on what, how. Every fact is a string holding its value or, where it
// could not be read, "unreadable: <one word>" (permission, absent, ...),
// or "n/a: <provider>" where the provider has no such thing (the sim has
// no driver): a fact is never left out silently. Absent (nil) only in
// results that predate it.
type BOM struct {
	XrcbenchVersion  string    `json:"xrcbench_version"`  // as Environment.Version
	XrcbenchRevision string    `json:"xrcbench_revision"` // the full VCS revision, "+dirty" when modified
	KernelRelease    string    `json:"kernel_release"`    // uname -r
	Device           DeviceBOM `json:"device"`
	CPU              CPUBOM    `json:"cpu"`
}

// DeviceBOM is the device's part of the bill of materials, read where the
// device facts are read (verbs, sysfs).
type DeviceBOM struct {
	Driver        string `json:"driver"`         // the kernel module bound to the PCI device (mlx5_core)
	DriverVersion string `json:"driver_version"` // /sys/module/<driver>/version, else srcversion
	Library       string `json:"libibverbs"`     // the real path of the libibverbs loaded
	// LibraryVersion is the rdma-core release of that file, or the
	// MLNX_OFED/OFED version where ofed_info -s answers.
	LibraryVersion string `json:"libibverbs_version"`
	FWVer          string `json:"fw_ver"`
	BoardID        string `json:"board_id"` // the PSID on Mellanox/NVIDIA adapters
	HCAType        string `json:"hca_type"`
	LinkSpeed      string `json:"pcie_link_speed"` // current_link_speed, e.g. "16.0 GT/s PCIe"
	LinkWidth      string `json:"pcie_link_width"` // current_link_width, lanes
	NUMANode       string `json:"numa_node"`
	// TestDoubleCost is the libibverbs test double's own cost model
	// (XRCBENCH_FAKEVERBS_COST, "none" unset): it stands in for the device
	// under test, so it is a fact of the device, as firmware is, not a
	// setting of the harness. Absent when the library is not the double.
	TestDoubleCost string `json:"test_double_cost,omitempty"`
}

// CPUBOM is the CPUs' part: where the threads ran and how those CPUs were
// set up.
type CPUBOM struct {
	Model string `json:"model"`
	// ThreadCPUs lists the CPUs the measuring threads were pinned to, or,
	// unpinned, "unpinned: any of <list>" (the CPUs the run was allowed).
	ThreadCPUs string `json:"thread_cpus"`
	// OnDeviceNode says whether those CPUs are all on the device's NUMA
	// node: "yes", "no: ..." naming those that are not, or why unknown.
	OnDeviceNode string `json:"on_device_numa_node"`
	Governor     string `json:"frequency_governor"` // scaling_governor of those CPUs ("performance", "mixed: ...")
	Boost        string `json:"boost"`              // turbo/boost: "on" or "off"
	SMT          string `json:"smt"`                // "on", "off", "notsupported", ...
	// SiblingsBusy is how busy the measured CPUs' SMT siblings outside
	// the measured set were during the run ("CPU 3 (sibling of 1): 45%
	// busy; ..."), or why that is not known. Absent before it was read.
	SiblingsBusy string `json:"smt_siblings_busy,omitempty"`
	// Check is whether the CPU check judged these facts: "on", or "off"
	// (--no-cpu-check: recorded, not judged). Absent before the check.
	Check string `json:"cpu_check,omitempty"`
}

// Unreadable is the value of a fact that could not be read, why being
// one word: "unreadable: permission".
func Unreadable(why string) string { return "unreadable: " + why }

// BOMRows is the bill of materials as (name, value) rows in a fixed
// order, as the reports show it.
func (b *BOM) BOMRows() [][2]string {
	if b == nil {
		return nil
	}
	d, c := b.Device, b.CPU
	rows := [][2]string{
		{"xrcbench version", b.XrcbenchVersion}, {"xrcbench revision", b.XrcbenchRevision},
		{"kernel release", b.KernelRelease},
		{"driver", d.Driver}, {"driver version", d.DriverVersion},
		{"libibverbs", d.Library}, {"libibverbs version", d.LibraryVersion},
		{"firmware", d.FWVer}, {"board_id (PSID)", d.BoardID}, {"hca_type", d.HCAType},
		{"PCIe link speed", d.LinkSpeed}, {"PCIe link width", d.LinkWidth}, {"device NUMA node", d.NUMANode},
	}
	if d.TestDoubleCost != "" {
		rows = append(rows, [2]string{"test double cost model", d.TestDoubleCost})
	}
	rows = append(rows,
		[2]string{"CPU model", c.Model}, [2]string{"threads' CPUs", c.ThreadCPUs},
		[2]string{"on the device's NUMA node", c.OnDeviceNode}, [2]string{"frequency governor", c.Governor},
		[2]string{"turbo/boost", c.Boost}, [2]string{"SMT", c.SMT})
	// Results that predate the CPU check have neither.
	if c.SiblingsBusy != "" {
		rows = append(rows, [2]string{"SMT siblings busy", c.SiblingsBusy})
	}
	if c.Check != "" {
		rows = append(rows, [2]string{"CPU check", c.Check})
	}
	return rows
}
