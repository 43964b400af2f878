package facts

// The device's part of a result's bill of materials (results.DeviceBOM):
// what sysfs says about the adapter, its driver and the libibverbs it was
// opened through. Each fact is its value or "unreadable: <one word>".

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/xrcbench/xrcbench/internal/regfile"
	"github.com/xrcbench/xrcbench/results"
)

// readFact is the first line of a sysfs file, or why it cannot be read.
// Bounded and regular files only: the folder is the one libibverbs names
// (ibdev_path), and a FIFO there hung `devices` and /dev/zero exhausted
// its memory.
func readFact(path string) string {
	b, err := regfile.ReadFile(path, regfile.MaxAttr)
	if err != nil {
		return results.Unreadable(whyUnreadable(err))
	}
	if v := strings.TrimSpace(string(b)); v != "" {
		return v
	}
	return results.Unreadable("empty")
}

// whyUnreadable is a read error in one word.
func whyUnreadable(err error) string {
	switch {
	case errors.Is(err, os.ErrPermission):
		return "permission"
	case errors.Is(err, os.ErrNotExist):
		return "absent"
	case errors.Is(err, regfile.ErrRefused):
		return "refused"
	}
	return "error"
}

// BOM reads the bill of materials' device facts from the class directory
// dir of a device (/sys/class/infiniband/<name>; "" when it has none).
func BOM(dir string) *results.DeviceBOM {
	if dir == "" {
		u := results.Unreadable("absent")
		return &results.DeviceBOM{Driver: u, DriverVersion: u, FWVer: u, BoardID: u, HCAType: u, LinkSpeed: u, LinkWidth: u, NUMANode: u}
	}
	b := &results.DeviceBOM{
		FWVer:     readFact(filepath.Join(dir, "fw_ver")),
		BoardID:   readFact(filepath.Join(dir, "board_id")),
		HCAType:   readFact(filepath.Join(dir, "hca_type")),
		LinkSpeed: readFact(filepath.Join(dir, "device", "current_link_speed")),
		LinkWidth: readFact(filepath.Join(dir, "device", "current_link_width")),
		NUMANode:  readFact(filepath.Join(dir, "device", "numa_node")),
	}
	if b.NUMANode == "-1" {
		// The kernel's word for a machine (or a bus) without NUMA.
		b.NUMANode = results.Unreadable("none")
	}
	drv := filepath.Join(dir, "device", "driver")
	l, err := os.Readlink(drv)
	if err != nil {
		b.Driver = results.Unreadable(whyUnreadable(err))
		b.DriverVersion = b.Driver
		return b
	}
	b.Driver = filepath.Base(l)
	b.DriverVersion = driverVersion(filepath.Join(drv, "module"))
	return b
}

// driverVersion is a driver module's version (MODULE_VERSION, which
// MLNX_OFED's modules set), else its srcversion (the checksum of its
// sources, which in-tree modules built with it have). A driver with no
// module directory is built into the kernel: its version is the kernel's.
func driverVersion(module string) string {
	if _, err := os.Stat(module); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return results.Unreadable("builtin")
		}
		return results.Unreadable(whyUnreadable(err))
	}
	if v := readFact(filepath.Join(module, "version")); !strings.HasPrefix(v, "unreadable: ") {
		return v
	}
	if v := readFact(filepath.Join(module, "srcversion")); !strings.HasPrefix(v, "unreadable: ") {
		return "srcversion " + v
	}
	return results.Unreadable("absent")
}

// LibraryBOM fills in the libibverbs the device was opened through: its
// real path and its version, MLNX_OFED's or OFED's where ofed_info says,
// else version (LibraryVersion's name for the file).
func LibraryBOM(b *results.DeviceBOM, path, version string) {
	if path == "" {
		b.Library, b.LibraryVersion = results.Unreadable("absent"), results.Unreadable("absent")
		return
	}
	b.Library = path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		b.Library = r
	}
	b.LibraryVersion = version
	if ofed := OFEDVersion(); ofed != "" {
		b.LibraryVersion = ofed + " (ofed_info -s), " + version
	}
}

var ofed struct {
	once sync.Once
	v    string
}

// OFEDVersion is what `ofed_info -s` prints (MLNX_OFED_LINUX-23.10-1.1.9.0:),
// without its colon; "" where there is no ofed_info (an inbox rdma-core).
// Asked once per process.
func OFEDVersion() string {
	ofed.once.Do(func() {
		path, err := exec.LookPath("ofed_info")
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, path, "-s").Output()
		if err != nil {
			return
		}
		ofed.v = strings.TrimSuffix(strings.TrimSpace(string(out)), ":")
	})
	return ofed.v
}
