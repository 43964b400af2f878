package verbs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// The device file's layout on linux/amd64 and arm64 with glibc, as sim.c
// lays it out: checkLayout proves these against a fresh device before a
// test relies on them, so a change of struct sim_shared fails loudly here.
const (
	offMagic    = 0
	offSize     = 16
	offMaxQPs   = 24
	offMaxRegs  = 28
	offCostReg  = 48
	offQPOff    = 104
	offQPStride = 112
	offNextQPN  = 120
	offDevLock  = 152
	mutexKind   = 16 // __data.__kind in pthread_mutex_t
	slotNRegs   = 48
	slotDomain  = 44
)

// damageOpts is a small device, so whole-file damage stays cheap.
var damageOpts = SimOptions{MaxQPs: 64, MaxRegs: 4}

type simFile struct {
	path          string
	size          int64
	qpOff, stride int64
}

// newDamageDevice makes a device in a fresh directory and returns its
// directory and layout; the device is closed again (the file stays).
func newDamageDevice(t testing.TB) (string, simFile) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sim")
	o := damageOpts
	o.Dir = dir
	dev, err := Open(Options{Provider: "sim", Sim: o})
	if err != nil {
		t.Fatal(err)
	}
	dev.Close()
	return dir, checkLayout(t, filepath.Join(dir, "sim.dev"))
}

func checkLayout(t testing.TB, path string) simFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	f := simFile{path: path, size: int64(len(b)), qpOff: int64(le.Uint64(b[offQPOff:])), stride: int64(le.Uint64(b[offQPStride:]))}
	if string(b[offMagic:offMagic+8]) != "XRCSIM01" || int64(le.Uint64(b[offSize:])) != f.size ||
		le.Uint32(b[offMaxQPs:]) != 64 || le.Uint32(b[offMaxRegs:]) != 4 || f.qpOff+64*f.stride != f.size {
		t.Fatalf("the sim device layout changed: update the offsets of sim_damage_test.go")
	}
	return f
}

func (f simFile) patch(t testing.TB, off int64, v any) {
	t.Helper()
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, v); err != nil {
		t.Fatal(err)
	}
	fd, err := os.OpenFile(f.path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if _, err := fd.WriteAt(buf.Bytes(), off); err != nil {
		t.Fatal(err)
	}
}

// TestSimDamagedFile: a device file cut short, scribbled over or not a
// device at all is refused on attach with one line naming the file, and
// an errno (EIO damaged, EPROTO foreign) — before this, the sizes were
// trusted and such files crashed workers and the coordinator.
func TestSimDamagedFile(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, f simFile)
		errno  syscall.Errno
	}{
		{"truncated to half", func(t *testing.T, f simFile) { os.Truncate(f.path, f.size/2) }, syscall.EIO},
		{"truncated inside the header", func(t *testing.T, f simFile) { os.Truncate(f.path, 100) }, syscall.EIO},
		{"grown", func(t *testing.T, f simFile) { os.Truncate(f.path, f.size+4096) }, syscall.EIO},
		{"random header", func(t *testing.T, f simFile) {
			b := make([]byte, 4096)
			rng.Read(b)
			f.patch(t, 0, b)
		}, syscall.EPROTO},
		{"zero QPs", func(t *testing.T, f simFile) { f.patch(t, offMaxQPs, uint32(0)) }, syscall.EIO},
		{"more QPs than the file holds", func(t *testing.T, f simFile) { f.patch(t, offMaxQPs, uint32(1<<20)) }, syscall.EIO},
		{"registrants per QP", func(t *testing.T, f simFile) { f.patch(t, offMaxRegs, uint32(0xffffffff)) }, syscall.EIO},
		{"size field", func(t *testing.T, f simFile) { f.patch(t, offSize, uint64(1<<40)) }, syscall.EIO},
		{"slot offset", func(t *testing.T, f simFile) { f.patch(t, offQPOff, uint64(1<<40)) }, syscall.EIO},
		{"slot stride", func(t *testing.T, f simFile) { f.patch(t, offQPStride, uint64(8)) }, syscall.EIO},
		{"next QP number", func(t *testing.T, f simFile) { f.patch(t, offNextQPN, uint32(0xffffffff)) }, syscall.EIO},
		{"an hour per reg", func(t *testing.T, f simFile) { f.patch(t, offCostReg, uint64(time.Hour)) }, syscall.EIO},
		{"device lock kind", func(t *testing.T, f simFile) { f.patch(t, offDevLock+mutexKind, uint32(0x5a5a5a5a)) }, syscall.EIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, f := newDamageDevice(t)
			tc.damage(t, f)
			o := damageOpts
			o.Dir = dir
			dev, err := Open(Options{Provider: "sim", Sim: o})
			if err == nil {
				dev.Close()
				t.Fatal("a damaged device opened")
			}
			mustErrno(t, "open", err, tc.errno)
			if !strings.Contains(err.Error(), f.path) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line naming %s", err, f.path)
			}
			// Inspection attaches as an observer: the same refusal.
			if _, err := InspectSim(dir); err == nil {
				t.Fatal("InspectSim attached to a damaged device")
			}
		})
	}
}

// TestSimDamagedInUse: damage to a device already attached fails the next
// operation with EIO (or EDEADLK for a lock word that stays taken) instead
// of steering it outside the mapping or into a glibc assertion.
func TestSimDamagedInUse(t *testing.T) {
	simLockPatience(300 * time.Millisecond)
	t.Cleanup(func() { simLockPatience(0) })
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, f simFile, slot int64)
		errno  syscall.Errno
	}{
		{"geometry changed under us", func(t *testing.T, f simFile, slot int64) { f.patch(t, offMaxQPs, uint32(1)) }, syscall.EIO},
		{"registrant count past the slot", func(t *testing.T, f simFile, slot int64) { f.patch(t, slot+slotNRegs, uint32(1000)) }, syscall.EIO},
		{"domain past the table", func(t *testing.T, f simFile, slot int64) { f.patch(t, slot+slotDomain, uint32(9999)) }, syscall.EIO},
		{"QP lock kind", func(t *testing.T, f simFile, slot int64) { f.patch(t, slot+mutexKind, uint32(0x7fff0003)) }, syscall.EIO},
		{"QP lock word held by nobody", func(t *testing.T, f simFile, slot int64) { f.patch(t, slot, uint32(0x3ffffff0)) }, syscall.EDEADLK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := damageOpts
			o.Dir = filepath.Join(t.TempDir(), "sim")
			dom := simPair(t, o, 1)[0]
			qpn, err := dom.CreateRcvQP()
			if err != nil {
				t.Fatal(err)
			}
			f := checkLayout(t, filepath.Join(o.Dir, "sim.dev"))
			tc.damage(t, f, f.qpOff+int64(qpn%64)*f.stride)
			err = dom.Reg(qpn)
			mustErrno(t, "reg on the damaged device", err, tc.errno)
			_, err = dom.Unreg(qpn)
			mustErrno(t, "unreg on the damaged device", err, tc.errno)
		})
	}
}

// TestSimTruncatedWhileMapped: a device file cut short under a process
// that has it mapped ends that process with one line naming the file and
// exit status 75, not a Go crash dump (sim_guard.c).
func TestSimTruncatedWhileMapped(t *testing.T) {
	o := damageOpts
	o.Dir = filepath.Join(t.TempDir(), "sim")
	dev, err := Open(Options{Provider: "sim", Sim: o})
	if err != nil {
		t.Fatal(err)
	}
	dom, err := dev.OpenDomain(filepath.Join(t.TempDir(), "domain"), true)
	if err != nil {
		t.Fatal(err)
	}
	qpn, err := dom.CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	f := checkLayout(t, filepath.Join(o.Dir, "sim.dev"))
	c, err := startChild(childSpec{Action: "regtouch", Options: Options{Provider: "sim", Sim: o},
		Domain: dom.Path(), QPN: qpn})
	if err != nil {
		t.Fatal(err)
	}
	// This process lets go first (the child's registration keeps the QP):
	// the guard would end it too, were it to touch the cut mapping.
	if _, err := dom.Unreg(qpn); err != nil {
		t.Fatal(err)
	}
	dom.Close()
	dev.Close()
	// At a page boundary: past the end of the file but inside its last
	// page, a mapping reads zeros rather than faulting.
	if err := os.Truncate(f.path, f.qpOff&^4095); err != nil {
		t.Fatal(err)
	}
	c.stdin.Write([]byte("go\n"))
	err = c.cmd.Wait()
	stderr := strings.TrimSpace(c.cmd.Stderr.(*strings.Builder).String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 75 {
		t.Fatalf("child: %v, want exit status 75; stderr:\n%s", err, stderr)
	}
	if strings.Count(stderr, "\n") != 0 || !strings.Contains(stderr, f.path) || !strings.Contains(stderr, "truncated") {
		t.Fatalf("child stderr %q: want one line naming %s", stderr, f.path)
	}
}

// TestSimHostileDir: the sim provider's device directory and file are
// shared memory every registrant trusts: one open to group or other, owned
// by another user, or a device file planted as a symbolic link or made
// writable by others is refused with one line, never used.
func TestSimHostileDir(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, dir string)
		root    bool
		want    string
	}{
		{"directory mode 0777", func(t *testing.T, dir string) {
			mustDo(t, os.Mkdir(dir, 0o700), os.Chmod(dir, 0o777))
		}, false, "open to group or other (mode 0777)"},
		{"directory of another uid", func(t *testing.T, dir string) {
			mustDo(t, os.Mkdir(dir, 0o700), os.Chown(dir, 65534, 65534))
		}, true, "belongs to uid 65534"},
		{"device file a symbolic link", func(t *testing.T, dir string) {
			victim := filepath.Join(filepath.Dir(dir), "victim")
			mustDo(t, os.WriteFile(victim, []byte("root only\n"), 0o600), os.Mkdir(dir, 0o700),
				os.Symlink(victim, filepath.Join(dir, "sim.dev")))
		}, false, "sim.dev"},
		{"device file writable by others", func(t *testing.T, dir string) {
			_, f := newDamageDevice(t)
			mustDo(t, os.Mkdir(dir, 0o700))
			b, err := os.ReadFile(f.path)
			mustDo(t, err, os.WriteFile(filepath.Join(dir, "sim.dev"), b, 0o600), os.Chmod(filepath.Join(dir, "sim.dev"), 0o666))
		}, false, "open to group or other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				testenv.Skip(t, testenv.Root, "to give a folder to another uid")
			}
			dir := filepath.Join(t.TempDir(), "sim")
			tc.prepare(t, dir)
			o := damageOpts
			o.Dir = dir
			dev, err := Open(Options{Provider: "sim", Sim: o})
			if err == nil {
				dev.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line containing %q", err, tc.want)
			}
			if victim := filepath.Join(filepath.Dir(dir), "victim"); tc.name == "device file a symbolic link" {
				if b, _ := os.ReadFile(victim); string(b) != "root only\n" {
					t.Fatalf("written through the link: %q", b)
				}
			}
		})
	}
}

func mustDo(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
