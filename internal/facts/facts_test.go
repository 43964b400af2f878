package facts

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testdouble"
	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
)

func TestReadSysfs(t *testing.T) {
	tests := []struct {
		name, pci, driver, numa string
		wantNUMA                int
		wantPCI                 string
	}{
		{"mlx5_0", "0000:3b:00.0", "mlx5_core", "1", 1, "0000:3b:00.0"},
		{"rxe0", "0000:00:1f.6", "e1000e", "-1", -1, "0000:00:1f.6"},
		{"mlx4_0", "0000:04:00.0", "mlx4_core", "", -1, "0000:04:00.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ReadSysfs(testdouble.Sysfs(t, tt.name, tt.pci, tt.driver, tt.numa))
			if s.Driver != tt.driver || s.NUMA != tt.wantNUMA || s.Extra["pci"] != tt.wantPCI {
				t.Errorf("got driver %q numa %d pci %q, want %q %d %q", s.Driver, s.NUMA, s.Extra["pci"], tt.driver, tt.wantNUMA, tt.wantPCI)
			}
			if s.Extra["board_id"] != "MT_0000000010" {
				t.Errorf("board_id = %q", s.Extra["board_id"])
			}
		})
	}
	if s := ReadSysfs(filepath.Join(t.TempDir(), "missing")); s.Driver != "" || s.NUMA != -1 {
		t.Errorf("missing device: got %+v, want unknowns", s)
	}
}

// TestBOM: every device fact of the bill of materials is read from
// where the kernel keeps it, or says in one word why it is not there.
func TestBOM(t *testing.T) {
	u := results.Unreadable
	tests := []struct {
		name   string
		layout func(t *testing.T, cls, dev, mod string)
		want   results.DeviceBOM
	}{
		{"MLNX_OFED module with a version", func(t *testing.T, cls, dev, mod string) {
			writeFiles(t, map[string]string{filepath.Join(cls, "fw_ver"): "22.31.1014", filepath.Join(cls, "hca_type"): "MT4125",
				filepath.Join(dev, "current_link_speed"): "16.0 GT/s PCIe", filepath.Join(dev, "current_link_width"): "16",
				filepath.Join(mod, "version"): "23.10-1.1.9", filepath.Join(mod, "srcversion"): "ABCDEF0123"})
		}, results.DeviceBOM{Driver: "mlx5_core", DriverVersion: "23.10-1.1.9", FWVer: "22.31.1014", BoardID: "MT_0000000010",
			HCAType: "MT4125", LinkSpeed: "16.0 GT/s PCIe", LinkWidth: "16", NUMANode: "1"}},
		{"in-tree module: srcversion only, no link files", func(t *testing.T, cls, dev, mod string) {
			writeFiles(t, map[string]string{filepath.Join(mod, "srcversion"): "ABCDEF0123"})
		}, results.DeviceBOM{Driver: "mlx5_core", DriverVersion: "srcversion ABCDEF0123", FWVer: u("absent"), BoardID: "MT_0000000010",
			HCAType: u("absent"), LinkSpeed: u("absent"), LinkWidth: u("absent"), NUMANode: "1"}},
		{"built-in driver: no module directory", func(t *testing.T, cls, dev, mod string) {
			if err := os.RemoveAll(mod); err != nil {
				t.Fatal(err)
			}
		}, results.DeviceBOM{Driver: "mlx5_core", DriverVersion: u("builtin"), FWVer: u("absent"), BoardID: "MT_0000000010",
			HCAType: u("absent"), LinkSpeed: u("absent"), LinkWidth: u("absent"), NUMANode: "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cls := testdouble.Sysfs(t, "mlx5_0", "0000:3b:00.0", "mlx5_core", "1")
			dev, _ := filepath.EvalSymlinks(filepath.Join(cls, "device"))
			drv, _ := filepath.EvalSymlinks(filepath.Join(dev, "driver"))
			mod := filepath.Join(filepath.Dir(cls), "..", "..", "module", "mlx5_core")
			if err := os.MkdirAll(mod, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(mod, filepath.Join(drv, "module")); err != nil {
				t.Fatal(err)
			}
			tt.layout(t, cls, dev, mod)
			if got := BOM(cls); *got != tt.want {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
	// No device in sysfs at all (the device's directory unknown): every
	// fact says so, none is left empty.
	got := BOM("")
	for i, v := range []string{got.Driver, got.DriverVersion, got.FWVer, got.BoardID, got.HCAType, got.LinkSpeed, got.LinkWidth, got.NUMANode} {
		if v != u("absent") {
			t.Errorf("fact %d of a device without sysfs = %q, want %q", i, v, u("absent"))
		}
	}
	// Root reads any file, so the word for a denied read is checked on
	// the error itself too.
	if got := whyUnreadable(&os.PathError{Op: "open", Path: "board_id", Err: syscall.EACCES}); got != "permission" {
		t.Errorf("EACCES is %q, want permission", got)
	}
	if os.Geteuid() != 0 {
		cls := testdouble.Sysfs(t, "mlx5_0", "0000:3b:00.0", "mlx5_core", "1")
		if err := os.Chmod(filepath.Join(cls, "board_id"), 0); err != nil {
			t.Fatal(err)
		}
		if got := BOM(cls).BoardID; got != u("permission") {
			t.Errorf("unreadable board_id = %q, want %q", got, u("permission"))
		}
	}
}

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, v := range files {
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLibraryVersion(t *testing.T) {
	tests := []struct {
		path   string
		double bool
		want   string
	}{
		{"", false, ""},
		{"/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0", false, "rdma-core 44.0"},
		{"/usr/lib64/libibverbs.so.1.11.32.0", false, "rdma-core 32.0"},
		{"/work/build/fakeverbs/libibverbs.so.1", true, "xrcbench fakeverbs (test double)"},
		// The name alone proves nothing: only the marker does.
		{"/work/build/fakeverbs/libibverbs.so.1", false, "libibverbs libibverbs.so.1"},
		{"/opt/ofed/lib/libibverbs.so.1.0.0", false, "libibverbs libibverbs.so.1.0.0"},
	}
	for _, tt := range tests {
		if got := LibraryVersion(tt.path, tt.double); got != tt.want {
			t.Errorf("LibraryVersion(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestIsTestDouble: the double is recognised by its marker symbol, and
// nothing else is, not even rdma-core's library in a folder named like
// the double's.
func TestIsTestDouble(t *testing.T) {
	tmp := t.TempDir()
	notELF := filepath.Join(tmp, "libibverbs.so.1")
	if err := os.WriteFile(notELF, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	if IsTestDouble(notELF) || IsTestDouble(filepath.Join(tmp, "missing.so")) || IsTestDouble("") {
		t.Error("a file that is no library, or none, is called the test double")
	}
	t.Run("double", func(t *testing.T) {
		lib := filepath.Join(testdouble.LibDir(t), "libibverbs.so.1")
		if !IsTestDouble(lib) {
			t.Errorf("%s (the double) is not recognised: no %s symbol", lib, TestDoubleMarker)
		}
	})
	t.Run("rdma-core", func(t *testing.T) {
		real, _ := filepath.Glob("/usr/lib*/*/libibverbs.so.1.*")
		more, _ := filepath.Glob("/usr/lib*/libibverbs.so.1.*")
		real = append(real, more...)
		if len(real) == 0 {
			testenv.Skip(t, testenv.Tool, "rdma-core's libibverbs is not installed (apt-get install libibverbs1)")
		}
		data, err := os.ReadFile(real[0])
		if err != nil {
			t.Fatal(err)
		}
		named := filepath.Join(tmp, "fakeverbs", "libibverbs.so.1")
		if err := os.MkdirAll(filepath.Dir(named), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(named, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{real[0], named} {
			if IsTestDouble(p) {
				t.Errorf("%s (rdma-core) is called the test double", p)
			}
		}
	})
}

// TestReadGIDs: a port's table as the kernel writes it, empty slots left
// out, types named as ibv_devinfo does, in index order.
func TestReadGIDs(t *testing.T) {
	tests := []struct {
		name, linkLayer string
		gids, types     map[string]string
		want            []GID
	}{
		{"RoCE port", "Ethernet",
			map[string]string{"0": "fe80:0000:0000:0000:fa4e:0000:0000:0100", "1": "0000:0000:0000:0000:0000:ffff:c0a8:0105",
				"2": "0000:0000:0000:0000:0000:0000:0000:0000", "10": "fe80:0000:0000:0000:fa4e:0000:0000:0101"},
			map[string]string{"0": "IB/RoCE v1", "1": "RoCE v2", "10": "RoCE v2"},
			[]GID{{0, "RoCE v1", "fe80::fa4e:0:0:100"}, {1, "RoCE v2", "::ffff:192.168.1.5"}, {10, "RoCE v2", "fe80::fa4e:0:0:101"}}},
		{"InfiniBand port: the kernel's IB/RoCE v1 is IB", "InfiniBand",
			map[string]string{"0": "fe80:0000:0000:0000:0002:c903:00a0:b1c2", "1": "not a gid"},
			map[string]string{"0": "IB/RoCE v1"},
			[]GID{{0, "IB", "fe80::2:c903:a0:b1c2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			port := filepath.Join(dir, "ports", "1")
			for _, d := range []string{"gids", filepath.Join("gid_attrs", "types")} {
				if err := os.MkdirAll(filepath.Join(port, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			files := map[string]string{filepath.Join(port, "link_layer"): tt.linkLayer}
			for i, g := range tt.gids {
				files[filepath.Join(port, "gids", i)] = g
			}
			for i, ty := range tt.types {
				files[filepath.Join(port, "gid_attrs", "types", i)] = ty
			}
			writeFiles(t, files)
			got, err := ReadGIDs(dir, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if _, err := ReadGIDs(t.TempDir(), 1); err == nil {
		t.Error("a port without a gids folder read without error")
	}
}

// within runs f, failing the test if it has not returned after 10s: a
// read blocked on a FIFO never returns.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still reading after 10s", what)
	}
}

// A hostile device folder (issue 43, item 4): the folder is the one
// libibverbs names (ibdev_path), or a test double's state folder, and a
// FIFO there hung `devices` for good while a link to /dev/zero ended in
// "fatal error: out of memory". Each attribute is read as a regular file
// of at most a page: the one planted is "unreadable: refused" (BOM), or
// unknown (ReadSysfs, ReadGIDs), and the others are still read.
func TestHostileSysfs(t *testing.T) {
	u := results.Unreadable("refused")
	tests := []struct {
		file  string // relative to the class folder
		check func(t *testing.T, b *results.DeviceBOM, s Sysfs, gids []GID)
	}{
		{"fw_ver", func(t *testing.T, b *results.DeviceBOM, s Sysfs, gids []GID) {
			if b.FWVer != u || b.HCAType != "MT4125" {
				t.Errorf("fw_ver %q, hca_type %q: want %q and the other read", b.FWVer, b.HCAType, u)
			}
		}},
		{"board_id", func(t *testing.T, b *results.DeviceBOM, s Sysfs, gids []GID) {
			if _, ok := s.Extra["board_id"]; b.BoardID != u || ok {
				t.Errorf("board_id %q (sysfs %q): want %q, and none", b.BoardID, s.Extra["board_id"], u)
			}
		}},
		{"node_desc", func(t *testing.T, b *results.DeviceBOM, s Sysfs, gids []GID) {
			if _, ok := s.Extra["node_desc"]; ok || s.Extra["hca_type"] != "MT4125" {
				t.Errorf("sysfs extra %v: want no node_desc, and hca_type read", s.Extra)
			}
		}},
		{"device/numa_node", func(t *testing.T, b *results.DeviceBOM, s Sysfs, gids []GID) {
			if b.NUMANode != u || s.NUMA != -1 || s.Driver != "mlx5_core" {
				t.Errorf("numa_node %q, sysfs %d, driver %q: want %q, -1 and the driver", b.NUMANode, s.NUMA, s.Driver, u)
			}
		}},
		{"device/current_link_speed", func(t *testing.T, b *results.DeviceBOM, s Sysfs, gids []GID) {
			if b.LinkSpeed != u || b.LinkWidth != "16" {
				t.Errorf("link speed %q, width %q: want %q and 16", b.LinkSpeed, b.LinkWidth, u)
			}
		}},
		{"ports/1/gids/0", func(t *testing.T, b *results.DeviceBOM, s Sysfs, gids []GID) {
			if !slices.Equal(gids, []GID{{1, "RoCE v2", "::ffff:192.168.1.5"}}) {
				t.Errorf("gids %+v: want the one at index 1 only", gids)
			}
		}},
		{"ports/1/link_layer", func(t *testing.T, b *results.DeviceBOM, s Sysfs, gids []GID) {
			if len(gids) != 2 || gids[1].Type != "IB" {
				t.Errorf("gids %+v: want both, the link layer unknown (IB)", gids)
			}
		}},
		{"ports/1/gid_attrs/types/1", func(t *testing.T, b *results.DeviceBOM, s Sysfs, gids []GID) {
			if len(gids) != 2 || gids[0].Type != "RoCE v1" || gids[1].Type != "" {
				t.Errorf("gids %+v: want both, the type of 1 unknown", gids)
			}
		}},
	}
	for _, kind := range []string{"fifo", "devzero"} {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.file, func(t *testing.T) {
				cls := testdouble.Sysfs(t, "mlx5_0", "0000:3b:00.0", "mlx5_core", "1")
				port := filepath.Join(cls, "ports", "1")
				for _, d := range []string{"gids", filepath.Join("gid_attrs", "types")} {
					if err := os.MkdirAll(filepath.Join(port, d), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				writeFiles(t, map[string]string{filepath.Join(cls, "fw_ver"): "22.31.1014", filepath.Join(cls, "hca_type"): "MT4125",
					filepath.Join(cls, "node_desc"): "host mlx5_0", filepath.Join(cls, "device", "current_link_speed"): "16.0 GT/s PCIe",
					filepath.Join(cls, "device", "current_link_width"): "16", filepath.Join(port, "link_layer"): "Ethernet",
					filepath.Join(port, "gids", "0"): "fe80:0000:0000:0000:fa4e:0000:0000:0100", filepath.Join(port, "gids", "1"): "0000:0000:0000:0000:0000:ffff:c0a8:0105",
					filepath.Join(port, "gid_attrs", "types", "0"): "IB/RoCE v1", filepath.Join(port, "gid_attrs", "types", "1"): "RoCE v2"})
				p := filepath.Join(cls, tt.file)
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				testenv.HostileFile(t, p, kind)
				var (
					err  error
					b    *results.DeviceBOM
					s    Sysfs
					gids []GID
				)
				within(t, "BOM", func() { b = BOM(cls) })
				within(t, "ReadSysfs", func() { s = ReadSysfs(cls) })
				within(t, "ReadGIDs", func() { gids, err = ReadGIDs(cls, 1) })
				if err != nil {
					t.Fatal(err)
				}
				tt.check(t, b, s, gids)
			})
		}
	}
}
