//go:build cgo

package verbs

/*
#include <errno.h>
#include <stdlib.h>
#include "sim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// simEnsureDir creates dir 0700 when missing and refuses anything that is
// not a real directory owned by us and closed to group and other: the
// device file in it is shared memory every registrant maps and trusts, so
// the directory must not be redirectable nor writable by anyone else.
func simEnsureDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("%w: the sim provider needs a device directory", syscall.EINVAL)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("sim device directory %s: %w", dir, pe.Err)
		}
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("sim device directory %s is not a directory (symbolic links are refused): %w", dir, syscall.ENOTDIR)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("sim device directory %s belongs to uid %d, not to us: %w", dir, sys.Uid, syscall.EPERM)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("sim device directory %s is open to group or other (mode %04o): refusing it; remove it or chmod 700 it: %w", dir, perm, syscall.EPERM)
	}
	return nil
}

// simConfigString says how a device was made, for messages.
func simConfigString(c *C.struct_sim_config) string {
	buf := make([]byte, 256)
	C.sim_config_string(c, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	return C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
}

func simConfig(o SimOptions) C.struct_sim_config {
	var cfg C.struct_sim_config
	cfg.max_qps = C.uint32_t(o.MaxQPs)
	cfg.max_regs = C.uint32_t(o.MaxRegs)
	if o.NoXRC {
		cfg.no_xrc = 1
	}
	cfg.cost_create_ns = C.uint64_t(o.Cost.Create)
	cfg.cost_reg_ns = C.uint64_t(o.Cost.Reg)
	cfg.cost_unreg_ns = C.uint64_t(o.Cost.Unreg)
	cfg.cost_destroy_ns = C.uint64_t(o.Cost.Destroy)
	cfg.cost_modify_ns = C.uint64_t(o.Cost.Modify)
	cfg.cost_reset_ns = C.uint64_t(o.Cost.Reset)
	cfg.cost_scan_ns = C.uint64_t(o.Cost.Scan)
	cfg.cmdq_depth = C.uint32_t(o.Cost.CmdQ)
	if o.Cost.Lookup == LookupList {
		cfg.lookup = C.SIM_LOOKUP_LIST
	}
	return cfg
}

// simOpenC opens the sim device in dir; cfg nil takes the device as it is.
func simOpenC(dir string, cfg *C.struct_sim_config, sem Semantics) (*C.struct_sim_dev, error) {
	if err := simEnsureDir(dir); err != nil {
		return nil, err
	}
	csem := C.int(C.SIM_LEGACY)
	if sem == Upstream || sem == LegacyMlnx { // MLNX_OFED's layer is over the upstream calls
		csem = C.SIM_UPSTREAM
	}
	// A device file truncated under the mapping ends this process with
	// one line instead of a crash dump (see sim_guard.c).
	if rc := C.sim_guard_install(); rc != 0 {
		return nil, fmt.Errorf("sim device: installing the SIGBUS guard: %w", syscall.Errno(rc))
	}
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	var dev *C.struct_sim_dev
	var have C.struct_sim_config
	file := dir + "/sim.dev"
	switch rc := C.sim_open_explained(cdir, cfg, csem, &dev, &have); rc {
	case 0:
		return dev, nil
	case C.EEXIST:
		return nil, fmt.Errorf("sim device %s is in use by a live process and was made with %s; this run asks for %s: stop that process or use another directory: %w",
			file, simConfigString(&have), simConfigString(cfg), syscall.EEXIST)
	case C.EPROTO:
		return nil, fmt.Errorf("%s is not a sim device of this version: remove it: %w", file, syscall.EPROTO)
	case C.EIO:
		return nil, fmt.Errorf("%s is damaged (its header, sizes or locks do not add up): remove it: %w", file, syscall.EIO)
	case C.EPERM:
		return nil, fmt.Errorf("%s or its directory belongs to another user or is open to group or other: refusing it: %w", file, syscall.EPERM)
	case C.ELOOP:
		return nil, fmt.Errorf("%s is a symbolic link: refusing it (remove it): %w", file, syscall.ELOOP)
	case C.ENOSPC:
		return nil, fmt.Errorf("no space left for the sim device %s (it needs %d MiB): free space or point TMPDIR elsewhere: %w",
			file, simSizeMiB(cfg), syscall.ENOSPC)
	default:
		return nil, fmt.Errorf("sim device in %s: %w", dir, syscall.Errno(rc))
	}
}

// simSizeMiB is the size of a device made with cfg (the defaults for nil
// or zero fields), rounded up.
func simSizeMiB(cfg *C.struct_sim_config) uint64 {
	var c C.struct_sim_config
	if cfg != nil {
		c = *cfg
	}
	return (uint64(C.sim_device_size(&c)) + 1<<20 - 1) >> 20
}

func simOpen(opts Options) (*Device, error) {
	o := opts.Sim
	if o.Semantics == "" {
		o.Semantics = Legacy
	}
	if _, err := ParseSemantics(string(o.Semantics)); err != nil {
		return nil, fmt.Errorf("%w: %v", syscall.EINVAL, err)
	}
	if o.MaxQPs < 0 || o.MaxRegs < 0 {
		return nil, fmt.Errorf("%w: negative sim capacity", syscall.EINVAL)
	}
	cfg := simConfig(o)
	dev, err := simOpenC(o.Dir, &cfg, o.Semantics)
	if err != nil {
		return nil, err
	}
	C.sim_get_config(dev, &cfg)
	C.sim_set_target(dev, C.int(opts.QPState))
	info := DeviceInfo{
		Name: SimDeviceName, XRC: cfg.no_xrc == 0, OpenQP: true, LegacyAPI: true,
		Semantics: string(o.Semantics), MaxQP: int(cfg.max_qps), Ports: 1, NUMANode: -1,
		Extra: map[string]string{"dir": o.Dir, "max_regs_per_qp": fmt.Sprint(cfg.max_regs)},
	}
	if c := o.Cost.String(); c != "" {
		info.Extra["cost"] = c
	}
	ops := unsafe.Pointer(&C.xb_sim_ops)
	if o.Semantics == LegacyMlnx {
		ops = unsafe.Pointer(&C.xb_sim_mlnx_ops)
	}
	return &Device{ops: ops, handle: unsafe.Pointer(dev), info: info}, nil
}

// Intact is an error when the device's file was cut short under its
// mapping (sim; nil for other providers): the next touch past its new end
// would end this process (SIGBUS, sim_guard.c). A process that must
// outlive the device, the coordinator, asks before it touches it.
func (d *Device) Intact() error {
	if d.closed || d.provider != "sim" {
		return nil
	}
	if rc := C.sim_file_intact((*C.struct_sim_dev)(d.handle)); rc != 0 {
		return &OpError{Op: "check_device", Provider: d.provider,
			Err: fmt.Errorf("sim device file %s/sim.dev was truncated while in use: %w", d.info.Extra["dir"], syscall.Errno(rc))}
	}
	return nil
}

// withSim opens the sim device in dir as it is, for one call.
func withSim(dir string, f func(*C.struct_sim_dev) error) error {
	if _, err := os.Lstat(dir + "/sim.dev"); err != nil {
		return fmt.Errorf("no sim device in %s: %w", dir, err)
	}
	dev, err := simOpenC(dir, nil, Legacy)
	if err != nil {
		return err
	}
	defer C.sim_close(dev)
	return f(dev)
}

// InspectSim lists the live QPs of the sim device in dir, after dropping
// what dead processes held. Tests and the engine's leak check use it.
func InspectSim(dir string) (SimSnapshot, error) {
	var snap SimSnapshot
	err := withSim(dir, func(dev *C.struct_sim_dev) error {
		for max := 64; ; max *= 4 {
			buf := make([]C.struct_sim_qp_info, max)
			var nr, nd C.int
			n := C.sim_inspect(dev, &buf[0], C.int(max), &nr, &nd)
			if n < 0 {
				return syscall.Errno(-n)
			}
			if int(n) > max {
				continue
			}
			for _, q := range buf[:n] {
				snap.QPs = append(snap.QPs, SimQP{QPN: uint32(q.qpn), Domain: int(q.domain),
					Registrants: int(q.nregs), Handles: int(q.handles)})
			}
			// The inspecting registrant itself is not one of the device's users.
			snap.Registrants, snap.Domains = int(nr)-1, int(nd)
			return nil
		}
	})
	return snap, err
}

// SimRegistrants lists the pids registered with QP qpn of the sim device in
// dir, one entry per registrant, with its handle count.
func SimRegistrants(dir string, qpn uint32) (pids []int, counts []int, err error) {
	err = withSim(dir, func(dev *C.struct_sim_dev) error {
		const max = 4096
		cp := make([]C.pid_t, max)
		cc := make([]C.uint32_t, max)
		n := C.sim_qp_registrants(dev, C.uint32_t(qpn), &cp[0], &cc[0], max)
		if n < 0 {
			return syscall.Errno(-n)
		}
		for i := 0; i < int(n) && i < max; i++ {
			pids = append(pids, int(cp[i]))
			counts = append(counts, int(cc[i]))
		}
		return nil
	})
	return pids, counts, err
}

// ReapSim drops every registration and domain handle the dead process pid
// held on the sim device in dir, destroying the QPs whose last registration
// it held (S10), as the kernel does when a process exits. It refuses
// (EBUSY) a process that is still alive.
func ReapSim(dir string, pid int) (dropped int, err error) {
	err = withSim(dir, func(dev *C.struct_sim_dev) error {
		n := C.sim_reap(dev, C.pid_t(pid))
		if n < 0 {
			return syscall.Errno(-n)
		}
		dropped = int(n)
		return nil
	})
	return dropped, err
}

// simHoldLock takes the device lock (qpn 0) or a QP slot's lock and never
// releases it: a test's child process calls it, then is killed, to prove
// the lock is recovered.
func simHoldLock(dir string, qpn uint32) error {
	dev, err := simOpenC(dir, nil, Legacy)
	if err != nil {
		return err
	}
	if rc := C.sim_debug_hold_lock(dev, C.uint32_t(qpn)); rc != 0 {
		return syscall.Errno(rc)
	}
	return nil
}

// simHoldDomain opens domain path on the device in dir and takes its lock
// shared (how "shared") or exclusive ("exclusive"), or a command-queue
// slot ("cmdq"), and never lets go: a test's child calls it, then is
// killed, to prove the others get past what it held.
func simHoldDomain(dir, path, how string) error {
	hows := map[string]C.int{"shared": C.SIM_HOLD_SHARED, "exclusive": C.SIM_HOLD_EXCLUSIVE, "cmdq": C.SIM_HOLD_CMDQ}
	h, ok := hows[how]
	if !ok {
		return fmt.Errorf("hold %q: want shared, exclusive or cmdq", how)
	}
	dev, err := simOpenC(dir, nil, Upstream)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var dom *C.struct_sim_dom
	if rc := C.sim_open_domain(dev, C.int(f.Fd()), C.SIM_UPSTREAM, &dom); rc != 0 {
		return syscall.Errno(rc)
	}
	if rc := C.sim_debug_hold_domain(dom, h); rc != 0 {
		return syscall.Errno(rc)
	}
	return nil
}

// SimThreadWaits is the time the calling OS thread has spent blocked on
// sim devices' locks (a domain's, a QP slot's, the device table's) and
// waiting for a command-queue slot, since it first used one. A caller
// that wants its own thread's figures locks it (runtime.LockOSThread).
func SimThreadWaits() (lock, cmdq time.Duration) {
	var l, c C.uint64_t
	C.sim_thread_waits(&l, &c)
	return time.Duration(l), time.Duration(c)
}

// simLockPatience sets how long a sim lock may stay held before an
// operation gives up with EDEADLK (0 restores the default), for tests of
// damaged lock words that must not wait the default 30 s.
func simLockPatience(d time.Duration) {
	C.sim_debug_lock_patience(C.int(d.Milliseconds()))
}
