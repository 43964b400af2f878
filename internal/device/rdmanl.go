package device

// The kernel's own list of a device's QPs, read through RDMA netlink
// (NETLINK_RDMA, the nldev client, as iproute2's `rdma resource show qp`
// does): the one view of a real device's live QPs that needs neither
// libibverbs nor a handle on the QPs. Plain Go, no cgo. The ABI numbers
// are those of include/uapi/rdma/rdma_netlink.h; rdmanl_test.go checks
// them against the installed header where there is one.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/regfile"
	"github.com/xrcbench/xrcbench/verbs"
)

// From include/uapi/rdma/rdma_netlink.h.
const (
	rdmaNLNLDev = 5 // RDMA_NL_NLDEV, the client

	nldevCmdGet      = 1  // RDMA_NLDEV_CMD_GET: devices (dump)
	nldevCmdResQPGet = 10 // RDMA_NLDEV_CMD_RES_QP_GET: a device's QPs (dump)

	nldevAttrDevIndex    = 1  // RDMA_NLDEV_ATTR_DEV_INDEX, u32
	nldevAttrDevName     = 2  // RDMA_NLDEV_ATTR_DEV_NAME, string
	nldevAttrPortIndex   = 3  // RDMA_NLDEV_ATTR_PORT_INDEX, u32
	nldevAttrResQP       = 19 // RDMA_NLDEV_ATTR_RES_QP, nested table
	nldevAttrResQPEntry  = 20 // RDMA_NLDEV_ATTR_RES_QP_ENTRY, nested table
	nldevAttrResLQPN     = 21 // RDMA_NLDEV_ATTR_RES_LQPN, u32
	nldevAttrResType     = 26 // RDMA_NLDEV_ATTR_RES_TYPE, u8 (enum ib_qp_type)
	nldevAttrResState    = 27 // RDMA_NLDEV_ATTR_RES_STATE, u8 (enum ib_qp_state)
	nldevAttrResPID      = 28 // RDMA_NLDEV_ATTR_RES_PID, u32
	nldevAttrResKernName = 29 // RDMA_NLDEV_ATTR_RES_KERN_NAME, string
)

// rdmaNLType is RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op).
func rdmaNLType(op int) uint16 { return uint16(rdmaNLNLDev<<10 + op) }

// nlaTypeMask drops NLA_F_NESTED and NLA_F_NET_BYTEORDER from an
// attribute's type: newer kernels mark nests, older ones do not.
const nlaTypeMask = 0x3fff

// LiveQP is one QP the kernel tracks for a device.
type LiveQP struct {
	QPN   uint32 `json:"qpn"`
	Type  string `json:"type"`  // as rdma(8) names it: GSI, RC, UD, XRC_INI, XRC_TGT, ...
	State string `json:"state"` // RESET, INIT, RTR, RTS, SQD, SQE, ERR
	Port  uint32 `json:"port,omitempty"`
	// PID is the owning process; 0 when the kernel names none (a kernel
	// QP, named by KernName, or one whose process has gone).
	PID      uint32 `json:"pid,omitempty"`
	KernName string `json:"kern_name,omitempty"`
}

// enum ib_qp_type and enum ib_qp_state (include/rdma/ib_verbs.h), named
// as rdma(8) prints them.
var (
	qpTypeNames  = map[uint8]string{0: "SMI", 1: "GSI", 2: "RC", 3: "UC", 4: "UD", 5: "RAW_IPV6", 6: "RAW_ETHERTYPE", 8: "RAW_PACKET", 9: "XRC_INI", 10: "XRC_TGT", 0xff: "DRIVER"}
	qpStateNames = []string{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"}
)

func qpTypeName(t uint8) string {
	if n, ok := qpTypeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type%d", t)
}

func qpStateName(s uint8) string {
	if int(s) < len(qpStateNames) {
		return qpStateNames[s]
	}
	return fmt.Sprintf("state%d", s)
}

// NetlinkError is why the kernel's QP list could not be read: one line
// that names the cause. It matches its errno with errors.Is.
type NetlinkError struct {
	Reason string
	Errno  syscall.Errno
}

func (e *NetlinkError) Error() string { return e.Reason }
func (e *NetlinkError) Unwrap() error { return e.Errno }

// LiveQPs lists the QPs the kernel tracks for the device named name, in
// increasing QP number. The kernel shows a process's QPs to processes of
// its PID namespace, and kernel-owned ones to the initial namespace.
func LiveQPs(name string) ([]LiveQP, error) {
	s, err := openRDMANetlink()
	if err != nil {
		return nil, err
	}
	defer s.close()
	index, err := s.deviceIndex(name)
	if err != nil {
		return nil, err
	}
	return s.qps(index, name)
}

// LiveQPsAll lists the QPs of every device the kernel's RDMA netlink
// knows, by device name: one look-up for many devices.
func LiveQPsAll() (map[string][]LiveQP, error) {
	s, err := openRDMANetlink()
	if err != nil {
		return nil, err
	}
	defer s.close()
	devs, err := s.devices()
	if err != nil {
		return nil, err
	}
	out := map[string][]LiveQP{}
	for _, d := range devs {
		qps, err := s.qps(d.index, d.name)
		if err != nil {
			return nil, err
		}
		out[d.name] = qps
	}
	return out, nil
}

type rdmaNetlink struct {
	fd  int
	seq uint32
	buf []byte
}

func openRDMANetlink() (*rdmaNetlink, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_RDMA)
	if err != nil {
		e := nlErrno(err)
		if e == unix.EPROTONOSUPPORT || e == unix.EAFNOSUPPORT {
			return nil, &NetlinkError{Errno: e, Reason: fmt.Sprintf("the kernel has no RDMA netlink (socket NETLINK_RDMA: %s): ib_core is not loaded", errnoName(e))}
		}
		return nil, &NetlinkError{Errno: e, Reason: fmt.Sprintf("cannot open an RDMA netlink socket: %s (%s)", e.Error(), errnoName(e))}
	}
	// A kernel that never answers must not hang the caller.
	tv := unix.Timeval{Sec: 5}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		e := nlErrno(err)
		return nil, &NetlinkError{Errno: e, Reason: fmt.Sprintf("cannot set a timeout on an RDMA netlink socket: %s", e.Error())}
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		e := nlErrno(err)
		return nil, &NetlinkError{Errno: e, Reason: fmt.Sprintf("cannot bind an RDMA netlink socket: %s (%s)", e.Error(), errnoName(e))}
	}
	// A dump's messages come in buffers of at most 32 KiB from the
	// kernel; twice that leaves room for what a newer one may send.
	return &rdmaNetlink{fd: fd, buf: make([]byte, 64<<10)}, nil
}

func (s *rdmaNetlink) close() { unix.Close(s.fd) }

func nlErrno(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

type nlDevice struct {
	index uint32
	name  string
}

func (s *rdmaNetlink) devices() ([]nlDevice, error) {
	var devs []nlDevice
	err := s.dump(nldevCmdGet, nil, func(payload []byte) error {
		d, err := decodeDevice(payload)
		if err != nil {
			return err
		}
		devs = append(devs, d)
		return nil
	})
	if err != nil {
		return nil, netlinkFailure("listing the RDMA devices (RDMA_NLDEV_CMD_GET)", err)
	}
	return devs, nil
}

func (s *rdmaNetlink) deviceIndex(name string) (uint32, error) {
	devs, err := s.devices()
	if err != nil {
		return 0, err
	}
	var names []string
	for _, d := range devs {
		if d.name == name {
			return d.index, nil
		}
		names = append(names, d.name)
	}
	have := "it lists none"
	if len(names) > 0 {
		have = "it lists " + strings.Join(names, ", ")
	}
	return 0, &NetlinkError{Errno: syscall.ENODEV, Reason: fmt.Sprintf("the kernel's RDMA netlink has no device named %q (%s)", name, have)}
}

func (s *rdmaNetlink) qps(index uint32, name string) ([]LiveQP, error) {
	var out []LiveQP
	req := nlAttrU32(nldevAttrDevIndex, index)
	err := s.dump(nldevCmdResQPGet, req, func(payload []byte) error {
		qps, err := decodeQPs(payload, index)
		if err != nil {
			return err
		}
		out = append(out, qps...)
		return nil
	})
	if err != nil {
		var ne *nlErrnoError
		if errors.As(err, &ne) && (ne.errno == syscall.EOPNOTSUPP || ne.errno == syscall.EINVAL) {
			return nil, &NetlinkError{Errno: ne.errno, Reason: fmt.Sprintf("the kernel's RDMA netlink has no QP resource tracking for %s (RDMA_NLDEV_CMD_RES_QP_GET failed %s; Linux 4.16 and later have it)", name, errnoName(ne.errno))}
		}
		return nil, netlinkFailure(fmt.Sprintf("listing the QPs of %s (RDMA_NLDEV_CMD_RES_QP_GET)", name), err)
	}
	slices.SortFunc(out, func(a, b LiveQP) int { return int(a.QPN) - int(b.QPN) })
	return out, nil
}

// nlErrnoError is an errno the kernel answered a request with.
type nlErrnoError struct{ errno syscall.Errno }

func (e *nlErrnoError) Error() string {
	return fmt.Sprintf("the kernel answered %s (%s)", e.errno.Error(), errnoName(e.errno))
}

func netlinkFailure(what string, err error) error {
	var ne *NetlinkError
	if errors.As(err, &ne) {
		return err
	}
	e := nlErrno(err)
	var ke *nlErrnoError
	if errors.As(err, &ke) {
		e = ke.errno
	}
	return &NetlinkError{Errno: e, Reason: "RDMA netlink: " + what + ": " + err.Error()}
}

// dump sends one dump request of op with attrs and hands each answer's
// payload (past the netlink header) to each, until the kernel's DONE.
func (s *rdmaNetlink) dump(op int, attrs []byte, each func([]byte) error) error {
	s.seq++
	typ := rdmaNLType(op)
	req := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(attrs))
	req = append(req, attrs...)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], typ)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], s.seq)
	if err := unix.Sendto(s.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	for {
		n, _, flags, _, err := unix.Recvmsg(s.fd, s.buf, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return errors.New("no answer from the kernel within 5s")
		}
		if err != nil {
			return err
		}
		if flags&unix.MSG_TRUNC != 0 {
			return fmt.Errorf("a message longer than %d bytes", len(s.buf))
		}
		done, err := decodeDumpChunk(s.buf[:n], typ, s.seq, each)
		if err != nil || done {
			return err
		}
	}
}

// decodeDumpChunk walks one buffer of netlink messages answering the
// request of type typ and number seq: each answer's payload goes to each;
// done is true at NLMSG_DONE. A message of another request (a late one
// of an earlier dump) is passed over.
func decodeDumpChunk(b []byte, typ uint16, seq uint32, each func([]byte) error) (done bool, err error) {
	for len(b) > 0 {
		if len(b) < unix.NLMSG_HDRLEN {
			return false, fmt.Errorf("a netlink message cut short: %d bytes, the header alone is %d", len(b), unix.NLMSG_HDRLEN)
		}
		l := binary.NativeEndian.Uint32(b[0:])
		t := binary.NativeEndian.Uint16(b[4:])
		sq := binary.NativeEndian.Uint32(b[8:])
		if l < unix.NLMSG_HDRLEN || uint64(l) > uint64(len(b)) {
			return false, fmt.Errorf("a netlink message of length %d in %d bytes", l, len(b))
		}
		payload := b[unix.NLMSG_HDRLEN:l]
		b = b[min(nlAlign(int(l)), len(b)):]
		if sq != seq {
			continue
		}
		switch t {
		case unix.NLMSG_DONE, unix.NLMSG_ERROR:
			// Both carry an int: 0, or the dump's error as a negative errno.
			if len(payload) < 4 {
				return false, fmt.Errorf("a netlink %s without its error code", map[uint16]string{unix.NLMSG_DONE: "DONE", unix.NLMSG_ERROR: "ERROR"}[t])
			}
			if code := int32(binary.NativeEndian.Uint32(payload)); code < 0 {
				return false, &nlErrnoError{errno: syscall.Errno(-code)}
			}
			if t == unix.NLMSG_DONE {
				return true, nil
			}
		case unix.NLMSG_NOOP, unix.NLMSG_OVERRUN:
		case typ:
			if err := each(payload); err != nil {
				return false, err
			}
		default:
			return false, fmt.Errorf("a netlink message of type %#x in answer to %#x", t, typ)
		}
	}
	return false, nil
}

func nlAlign(n int) int { return (n + 3) &^ 3 }

// nlAttr is one netlink attribute: its type (flags dropped) and value.
type nlAttr struct {
	typ uint16
	val []byte
}

// parseAttrs splits b into attributes; a length that runs past b is an
// error, as is a leftover shorter than an attribute header.
func parseAttrs(b []byte) ([]nlAttr, error) {
	var out []nlAttr
	for len(b) > 0 {
		if len(b) < unix.NLA_HDRLEN {
			return nil, fmt.Errorf("an attribute cut short: %d bytes", len(b))
		}
		l := int(binary.NativeEndian.Uint16(b[0:]))
		t := binary.NativeEndian.Uint16(b[2:]) & nlaTypeMask
		if l < unix.NLA_HDRLEN || l > len(b) {
			return nil, fmt.Errorf("attribute %d of length %d in %d bytes", t, l, len(b))
		}
		out = append(out, nlAttr{typ: t, val: b[unix.NLA_HDRLEN:l]})
		b = b[min(nlAlign(l), len(b)):]
	}
	return out, nil
}

func nlAttrU32(typ uint16, v uint32) []byte {
	b := make([]byte, 8)
	binary.NativeEndian.PutUint16(b[0:], 8)
	binary.NativeEndian.PutUint16(b[2:], typ)
	binary.NativeEndian.PutUint32(b[4:], v)
	return b
}

func attrU32(a nlAttr) (uint32, error) {
	if len(a.val) < 4 {
		return 0, fmt.Errorf("attribute %d: %d bytes, want a u32", a.typ, len(a.val))
	}
	return binary.NativeEndian.Uint32(a.val), nil
}

func attrU8(a nlAttr) (uint8, error) {
	if len(a.val) < 1 {
		return 0, fmt.Errorf("attribute %d: empty, want a u8", a.typ)
	}
	return a.val[0], nil
}

func attrString(a nlAttr) string {
	s, _, _ := strings.Cut(string(a.val), "\x00")
	return s
}

// decodeDevice reads one answer to RDMA_NLDEV_CMD_GET.
func decodeDevice(payload []byte) (nlDevice, error) {
	attrs, err := parseAttrs(payload)
	if err != nil {
		return nlDevice{}, err
	}
	var d nlDevice
	var haveIndex bool
	for _, a := range attrs {
		switch a.typ {
		case nldevAttrDevIndex:
			if d.index, err = attrU32(a); err != nil {
				return d, err
			}
			haveIndex = true
		case nldevAttrDevName:
			d.name = attrString(a)
		}
	}
	if !haveIndex || d.name == "" {
		return d, errors.New("a device without its index or name")
	}
	return d, nil
}

// decodeQPs reads one answer to RDMA_NLDEV_CMD_RES_QP_GET for device
// index: a table of QP entries, each a nest of the QP's attributes. An
// answer for another device is an error (the kernel was asked for one).
func decodeQPs(payload []byte, index uint32) ([]LiveQP, error) {
	attrs, err := parseAttrs(payload)
	if err != nil {
		return nil, err
	}
	var out []LiveQP
	for _, a := range attrs {
		switch a.typ {
		case nldevAttrDevIndex:
			got, err := attrU32(a)
			if err != nil {
				return nil, err
			}
			if got != index {
				return nil, fmt.Errorf("QPs of device %d in answer to a request for device %d", got, index)
			}
		case nldevAttrResQP:
			entries, err := parseAttrs(a.val)
			if err != nil {
				return nil, fmt.Errorf("the QP table: %w", err)
			}
			for _, e := range entries {
				if e.typ != nldevAttrResQPEntry {
					continue
				}
				q, err := decodeQP(e.val)
				if err != nil {
					return nil, err
				}
				out = append(out, q)
			}
		}
	}
	return out, nil
}

func decodeQP(b []byte) (LiveQP, error) {
	attrs, err := parseAttrs(b)
	if err != nil {
		return LiveQP{}, fmt.Errorf("a QP entry: %w", err)
	}
	var q LiveQP
	var haveQPN, haveType, haveState bool
	for _, a := range attrs {
		switch a.typ {
		case nldevAttrResLQPN:
			q.QPN, err = attrU32(a)
			haveQPN = true
		case nldevAttrResType:
			var t uint8
			t, err = attrU8(a)
			q.Type, haveType = qpTypeName(t), true
		case nldevAttrResState:
			var st uint8
			st, err = attrU8(a)
			q.State, haveState = qpStateName(st), true
		case nldevAttrPortIndex:
			q.Port, err = attrU32(a)
		case nldevAttrResPID:
			q.PID, err = attrU32(a)
		case nldevAttrResKernName:
			q.KernName = attrString(a)
		}
		if err != nil {
			return LiveQP{}, fmt.Errorf("a QP entry: %w", err)
		}
	}
	if !haveQPN || !haveType || !haveState {
		return LiveQP{}, fmt.Errorf("a QP entry without its number, type or state (qpn %v, type %v, state %v)", haveQPN, haveType, haveState)
	}
	return q, nil
}

// DeviceQPs lists the QP numbers a device holds as the kernel sees them,
// so a destruction libibverbs reported can be confirmed: through RDMA
// netlink (what "rdma resource show qp" lists) for a kernel device; for
// the libibverbs test double, which plays the kernel, its own device (the
// sim in its state folder, found from its fake sysfs path). how names
// the source ("rdma netlink", "the test double's device"); an error says
// why the device cannot be asked, and then nothing can be confirmed.
func DeviceQPs(info verbs.DeviceInfo) (qpns map[uint32]bool, how string, err error) {
	ibdevPath := info.SysfsDir()
	qpns = map[uint32]bool{}
	if info.TestDouble {
		// <state>/sysfs/class/infiniband/<name> -> <state>/<name>
		dir, ok := strings.CutSuffix(ibdevPath, filepath.Join("sysfs", "class", "infiniband", info.Name))
		if !ok || info.Name == "" {
			return nil, "", fmt.Errorf("the test double's device %s has no state folder in %q", info.Name, ibdevPath)
		}
		snap, err := verbs.InspectSim(filepath.Join(dir, info.Name))
		if err != nil {
			return nil, "", fmt.Errorf("inspecting the test double's device %s: %w", info.Name, err)
		}
		for _, q := range snap.QPs {
			qpns[q.QPN] = true
		}
		// A silentdestroy device's hardware keeps what it did not destroy.
		// The state folder comes from ibdev_path: bounded, regular only.
		if raw, err := regfile.ReadFile(filepath.Join(dir, "silent-"+info.Name), regfile.MaxState); err == nil {
			for _, l := range strings.Fields(string(raw)) {
				if q, err := strconv.ParseUint(l, 16, 24); err == nil {
					qpns[uint32(q)] = true
				}
			}
		}
		return qpns, "the test double's device", nil
	}
	qps, err := LiveQPs(info.Name)
	if err != nil {
		return nil, "", err
	}
	for _, q := range qps {
		qpns[q.QPN] = true
	}
	return qpns, "rdma netlink", nil
}
