package facts

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/xrcbench/xrcbench/internal/regfile"
)

// ClassDir is where the kernel lists RDMA devices; a device whose
// libibverbs gives no ibdev_path is looked up here.
const ClassDir = "/sys/class/infiniband"

// Sysfs is what a device's class directory says beyond libibverbs.
type Sysfs struct {
	Driver string // the kernel module bound to the device ("" unknown)
	NUMA   int    // -1 when unknown or the machine has none
	// Extra holds pci (the PCI address, which names the device in
	// debugfs: mlx5/<pci>/...), board_id, hca_type and node_desc where
	// the kernel has them.
	Extra map[string]string
}

// ReadSysfs reads the driver, NUMA node and PCI address of the device
// whose class directory is dir. Missing files leave fields unknown.
func ReadSysfs(dir string) Sysfs {
	s := Sysfs{NUMA: -1, Extra: map[string]string{}}
	if dir == "" {
		return s
	}
	if l, err := os.Readlink(filepath.Join(dir, "device", "driver")); err == nil {
		s.Driver = filepath.Base(l)
	}
	if b, err := readAttr(filepath.Join(dir, "device", "numa_node")); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 0 {
			s.NUMA = n
		}
	}
	if p, err := filepath.EvalSymlinks(filepath.Join(dir, "device")); err == nil {
		if base := filepath.Base(p); pciAddr.MatchString(base) {
			s.Extra["pci"] = base
		}
	}
	for _, name := range []string{"board_id", "hca_type", "node_desc"} {
		if b, err := readAttr(filepath.Join(dir, name)); err == nil {
			if v := strings.TrimSpace(string(b)); v != "" {
				s.Extra[name] = v
			}
		}
	}
	return s
}

// readAttr reads a sysfs attribute: a regular file of at most a page, so
// a FIFO or a device planted where libibverbs says the device's folder is
// is refused, neither blocking nor growing the read.
func readAttr(path string) ([]byte, error) { return regfile.ReadFile(path, regfile.MaxAttr) }

var pciAddr = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

// GID is one entry of a port's GID table.
type GID struct {
	Index   int    `json:"index"`
	Type    string `json:"type"`    // "RoCE v2", "RoCE v1", "IB", or "" when sysfs does not say
	Address string `json:"address"` // IPv6 notation, as ibv_devinfo -v prints GIDs
}

// The values of enum xb_gid_type (verbs/rtrpath.h): how the providers'
// C side names a GID's type.
const (
	GIDIB     = 0
	GIDRoCEv1 = 1
	GIDRoCEv2 = 2
)

// GIDTypeName names a GID type as ibv_devinfo does ("" when unknown).
func GIDTypeName(t int) string {
	switch t {
	case GIDIB:
		return "IB"
	case GIDRoCEv1:
		return "RoCE v1"
	case GIDRoCEv2:
		return "RoCE v2"
	}
	return ""
}

// ReadGIDs reads port's GID table from the device's class directory dir:
// ports/<port>/gids/<index> (the address) and gid_attrs/types/<index>
// (its type, where the kernel has it: 4.5 on), the non-empty entries in
// index order, as ibv_devinfo -v and show_gids list them.
func ReadGIDs(dir string, port int) ([]GID, error) {
	pdir := filepath.Join(dir, "ports", strconv.Itoa(port))
	names, err := os.ReadDir(filepath.Join(pdir, "gids"))
	if err != nil {
		return nil, err
	}
	ethernet := false
	if ll, err := readAttr(filepath.Join(pdir, "link_layer")); err == nil {
		ethernet = strings.TrimSpace(string(ll)) == "Ethernet"
	}
	var out []GID
	for _, n := range names {
		i, err := strconv.Atoi(n.Name())
		if err != nil || i < 0 {
			continue
		}
		raw, err := readAttr(filepath.Join(pdir, "gids", n.Name()))
		if err != nil {
			continue
		}
		gid, ok := parseGID(strings.TrimSpace(string(raw)))
		if !ok || gid == [16]byte{} {
			continue // an empty slot of the table
		}
		e := GID{Index: i, Address: FormatGID(gid)}
		if t, err := readAttr(filepath.Join(pdir, "gid_attrs", "types", n.Name())); err == nil {
			switch strings.TrimSpace(string(t)) {
			case "RoCE v2":
				e.Type = GIDTypeName(GIDRoCEv2)
			case "IB/RoCE v1":
				e.Type = GIDTypeName(GIDRoCEv1)
			}
		}
		if !ethernet {
			e.Type = GIDTypeName(GIDIB) // the kernel names an InfiniBand GID "IB/RoCE v1" too
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b GID) int { return a.Index - b.Index })
	return out, nil
}

// parseGID reads a GID as sysfs writes it: eight groups of four hex
// digits, fe80:0000:0000:0000:fa4e:0000:0000:0100.
func parseGID(s string) ([16]byte, bool) {
	var g [16]byte
	groups := strings.Split(s, ":")
	if len(groups) != 8 {
		return g, false
	}
	for i, grp := range groups {
		v, err := strconv.ParseUint(grp, 16, 16)
		if err != nil || len(grp) != 4 {
			return g, false
		}
		g[2*i], g[2*i+1] = byte(v>>8), byte(v)
	}
	return g, true
}

// FormatGID writes a GID as an IPv6 address (an IPv4-mapped one as
// ::ffff:a.b.c.d), which is what a RoCE GID is and how a user knows it.
func FormatGID(g [16]byte) string { return netip.AddrFrom16(g).String() }
