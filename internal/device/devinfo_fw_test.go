package device

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/verbs"
)

func writeFW(t *testing.T, root, pci string, counters map[string][2]string) {
	t.Helper()
	for cmd, nv := range counters {
		dir := filepath.Join(root, "mlx5", pci, "commands", cmd)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "n"), []byte(nv[0]+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "average"), []byte(nv[1]+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFWCommands(t *testing.T) {
	mlx := verbs.DeviceInfo{Name: "mlx5_0", Driver: "mlx5_core", Extra: map[string]string{"pci": "0000:3b:00.0"}}
	root := t.TempDir()
	writeFW(t, root, "0000:3b:00.0", map[string][2]string{"CREATE_QP": {"100", "20000"}, "DESTROY_QP": {"100", "50000"}})
	before := snapshotFWCommands(root, mlx)
	if before.NotReadable != "" || before.Commands["DESTROY_QP"] != (FWCommand{N: 100, AverageNS: 50000}) {
		t.Fatalf("before: %+v", before)
	}
	// 100 more destroys at 150us each: the running mean becomes 100us.
	writeFW(t, root, "0000:3b:00.0", map[string][2]string{"CREATE_QP": {"100", "20000"}, "DESTROY_QP": {"200", "100000"}})
	after := snapshotFWCommands(root, mlx)
	d := FWCommandsSince(before, after)
	if d.NotReadable != "" {
		t.Fatalf("delta not readable: %s", d.NotReadable)
	}
	if c := d.Commands["DESTROY_QP"]; c.N != 100 || c.MeanNS != 150000 || c.ErrNS != 2 {
		t.Errorf("DESTROY_QP delta = %+v, want 100 commands of 150000ns, within 200/100 = 2ns", c)
	}
	if c := d.Commands["CREATE_QP"]; c.N != 0 || c.MeanNS != 0 {
		t.Errorf("CREATE_QP delta = %+v, want none", c)
	}
	env := d.Environment()
	if env["fw_cmd.DESTROY_QP.n"] != "100" || env["fw_cmd.DESTROY_QP.mean_ns"] != "150000" || env["fw_cmd.DESTROY_QP.err_ns"] != "2" {
		t.Errorf("environment = %v", env)
	}

	// A reset in between makes the delta not readable, never negative.
	writeFW(t, root, "0000:3b:00.0", map[string][2]string{"CREATE_QP": {"100", "20000"}, "DESTROY_QP": {"5", "1000"}})
	if d := FWCommandsSince(after, snapshotFWCommands(root, mlx)); !strings.Contains(d.NotReadable, "reset") {
		t.Errorf("reset: got %+v", d)
	}

	notReadable := []struct {
		name string
		info verbs.DeviceInfo
		root string
		want string
	}{
		{"other driver", verbs.DeviceInfo{Name: "rxe0", Driver: "rdma_rxe"}, root, "driver rdma_rxe"},
		{"no pci", verbs.DeviceInfo{Name: "mlx5_0", Driver: "mlx5_core"}, root, "PCI address"},
		{"no debugfs", mlx, filepath.Join(root, "absent"), "does not exist"},
	}
	for _, tt := range notReadable {
		s := snapshotFWCommands(tt.root, tt.info)
		if !strings.HasPrefix(s.NotReadable, "not readable: ") || !strings.Contains(s.NotReadable, tt.want) {
			t.Errorf("%s: NotReadable = %q, want it to mention %q", tt.name, s.NotReadable, tt.want)
		}
		if d := FWCommandsSince(s, s); d.Environment()["fw_cmd"] != s.NotReadable {
			t.Errorf("%s: environment = %v", tt.name, d.Environment())
		}
	}
	if os.Geteuid() != 0 {
		dir := filepath.Join(root, "mlx5", "0000:3b:00.0", "commands", "CREATE_QP")
		os.Chmod(filepath.Join(dir, "n"), 0)
		if s := snapshotFWCommands(root, mlx); !strings.Contains(s.NotReadable, "permission denied") {
			t.Errorf("unreadable file: %q", s.NotReadable)
		}
	}
}

// The moves a modify makes (RST2INIT_QP, INIT2RTR_QP) and the reset a
// destroy out of RTR makes (2RST_QP) are read like create and destroy. A
// kernel that keeps statistics only of commands it has issued has no
// directory for one never issued: it is left out of the snapshot, and
// counted from zero when it appears during the run.
func TestFWCommandsModify(t *testing.T) {
	mlx := verbs.DeviceInfo{Name: "mlx5_0", Driver: "mlx5_core", Extra: map[string]string{"pci": "0000:3b:00.0"}}
	root := t.TempDir()
	writeFW(t, root, "0000:3b:00.0", map[string][2]string{"CREATE_QP": {"10", "20000"}, "DESTROY_QP": {"10", "50000"},
		"RST2INIT_QP": {"10", "8000"}, "2RST_QP": {"4", "30000"}})
	before := snapshotFWCommands(root, mlx)
	if before.NotReadable != "" || len(before.Commands) != 4 || before.Commands["RST2INIT_QP"] != (FWCommand{N: 10, AverageNS: 8000}) {
		t.Fatalf("before: %+v, want 4 commands (INIT2RTR_QP never issued, so absent)", before)
	}
	// 30 QPs created, moved to RTR and destroyed out of RTR: RST2INIT_QP
	// at 12µs, INIT2RTR_QP (appearing now) at 25µs, 2RST_QP at 30µs.
	writeFW(t, root, "0000:3b:00.0", map[string][2]string{"CREATE_QP": {"40", "20000"}, "DESTROY_QP": {"40", "50000"},
		"RST2INIT_QP": {"40", "11000"}, "INIT2RTR_QP": {"30", "25000"}, "2RST_QP": {"34", "30000"}})
	d := FWCommandsSince(before, snapshotFWCommands(root, mlx))
	if d.NotReadable != "" {
		t.Fatalf("delta not readable: %s", d.NotReadable)
	}
	for name, want := range map[string]FWCommandDelta{
		"RST2INIT_QP": {N: 30, MeanNS: 12000, ErrNS: 40.0 / 30},
		"INIT2RTR_QP": {N: 30, MeanNS: 25000, ErrNS: 1},
		"2RST_QP":     {N: 30, MeanNS: 30000, ErrNS: 34.0 / 30},
		"CREATE_QP":   {N: 30, MeanNS: 20000, ErrNS: 40.0 / 30},
	} {
		if got := d.Commands[name]; got != want {
			t.Errorf("%s delta = %+v, want %+v", name, got, want)
		}
	}
	env := d.Environment()
	if env["fw_cmd.INIT2RTR_QP.n"] != "30" || env["fw_cmd.2RST_QP.mean_ns"] != "30000" || env["fw_cmd.RST2INIT_QP.err_ns"] != "2" {
		t.Errorf("environment = %v", env)
	}
	// A commands folder with none of the QP commands says so.
	empty := t.TempDir()
	writeFW(t, empty, "0000:3b:00.0", map[string][2]string{"QUERY_HCA_CAP": {"1", "1"}})
	if s := snapshotFWCommands(empty, mlx); !strings.Contains(s.NotReadable, "holds none of CREATE_QP") {
		t.Errorf("no QP command: %+v", s)
	}
}

// A firmware counter planted as a FIFO or a link to /dev/zero (issue 43,
// item 4) makes the snapshot not readable, naming it, at once.
func TestFWCommandsRefuse(t *testing.T) {
	mlx := verbs.DeviceInfo{Name: "mlx5_0", Driver: "mlx5_core", Extra: map[string]string{"pci": "0000:3b:00.0"}}
	for _, kind := range []string{"fifo", "devzero"} {
		t.Run(kind, func(t *testing.T) {
			root := t.TempDir()
			writeFW(t, root, "0000:3b:00.0", map[string][2]string{"CREATE_QP": {"100", "20000"}})
			p := filepath.Join(root, "mlx5", "0000:3b:00.0", "commands", "CREATE_QP", "n")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			testenv.HostileFile(t, p, kind)
			got := make(chan FWSnapshot, 1)
			go func() { got <- snapshotFWCommands(root, mlx) }()
			select {
			case s := <-got:
				if !strings.Contains(s.NotReadable, p+": not a regular file") {
					t.Errorf("NotReadable = %q, want it to name %s, not a regular file", s.NotReadable, p)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("still reading after 10s")
			}
		})
	}
}

// mlx5's failure counters (failed, failed_mbox_status and the last
// failure's errno, mailbox status and syndrome, the syndrome printed
// 0x%08x as debugfs_create_x32 prints it) are read beside n and average:
// the delta counts the failures in between and keeps the last one's
// reason only when the count moved. A kernel without them (no "failed")
// leaves Failures nil: unknown, not none; one without the syndrome file
// leaves only that out.
func TestFWCommandFailures(t *testing.T) {
	mlx := verbs.DeviceInfo{Name: "mlx5_0", Driver: "mlx5_core", Extra: map[string]string{"pci": "0000:3b:00.0"}}
	root := t.TempDir()
	dir := filepath.Join(root, "mlx5", "0000:3b:00.0", "commands")
	writeFail := func(cmd string, files map[string]string) {
		t.Helper()
		for f, v := range files {
			if err := os.WriteFile(filepath.Join(dir, cmd, f), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeFW(t, root, "0000:3b:00.0", map[string][2]string{"CREATE_QP": {"10", "20000"}, "DESTROY_QP": {"10", "50000"}, "2RST_QP": {"10", "1000"}})
	old := map[string]string{"failed": "1", "failed_mbox_status": "1", "last_failed_errno": "121", "last_failed_mbox_status": "3", "last_failed_syndrome": "0x00000001"}
	writeFail("CREATE_QP", old)
	writeFail("DESTROY_QP", old)
	// 2RST_QP: a kernel with the counters but not yet the syndrome.
	writeFail("2RST_QP", map[string]string{"failed": "0", "failed_mbox_status": "0", "last_failed_errno": "0", "last_failed_mbox_status": "0"})
	before := snapshotFWCommands(root, mlx)
	if before.NotReadable != "" || before.Commands["DESTROY_QP"].Failures == nil || *before.Commands["DESTROY_QP"].Failures.LastSyndrome != 1 ||
		before.Commands["2RST_QP"].Failures == nil || before.Commands["2RST_QP"].Failures.LastSyndrome != nil {
		t.Fatalf("before: %+v", before)
	}
	// Two DESTROY_QP failed during the run (one with a bad mailbox
	// status, syndrome 0x1ab2c3d4); CREATE_QP's old failure stays old.
	writeFW(t, root, "0000:3b:00.0", map[string][2]string{"CREATE_QP": {"20", "20000"}, "DESTROY_QP": {"20", "50000"}, "2RST_QP": {"20", "1000"}})
	writeFail("DESTROY_QP", map[string]string{"failed": "3", "failed_mbox_status": "2", "last_failed_errno": "121", "last_failed_mbox_status": "3", "last_failed_syndrome": "0x1ab2c3d4"})
	after := snapshotFWCommands(root, mlx)
	d := FWCommandsSince(before, after)
	if d.NotReadable != "" {
		t.Fatalf("delta not readable: %s", d.NotReadable)
	}
	syn := uint64(0x1ab2c3d4)
	tests := []struct {
		cmd  string
		want *FWFailureDelta
	}{
		{"CREATE_QP", &FWFailureDelta{}},
		{"DESTROY_QP", &FWFailureDelta{Failed: 2, FailedMboxStatus: 1,
			Last: &FWFailures{Failed: 3, FailedMboxStatus: 2, LastErrno: 121, LastMboxStatus: 3, LastSyndrome: &syn}}},
		{"2RST_QP", &FWFailureDelta{}},
	}
	for _, tt := range tests {
		if got := d.Commands[tt.cmd].Failures; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s failures %+v, want %+v", tt.cmd, got, tt.want)
		}
	}
	// A failure counter going backwards is a reset, as n's is.
	writeFail("DESTROY_QP", map[string]string{"failed": "0"})
	if d := FWCommandsSince(after, snapshotFWCommands(root, mlx)); !strings.Contains(d.NotReadable, "DESTROY_QP failure counter was reset") {
		t.Errorf("reset: %+v", d)
	}
	// A kernel without the files: unknown.
	root2 := t.TempDir()
	writeFW(t, root2, "0000:3b:00.0", map[string][2]string{"CREATE_QP": {"10", "20000"}})
	if s := snapshotFWCommands(root2, mlx); s.NotReadable != "" || s.Commands["CREATE_QP"].Failures != nil {
		t.Errorf("without failure files: %+v", s)
	}
	// A syndrome that is not a number makes the snapshot not readable.
	writeFail("CREATE_QP", map[string]string{"last_failed_syndrome": "zz"})
	if s := snapshotFWCommands(root, mlx); !strings.Contains(s.NotReadable, "not a number") {
		t.Errorf("bad syndrome: %+v", s)
	}
}
