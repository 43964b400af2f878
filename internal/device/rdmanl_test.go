package device

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/internal/testenv"
)

// nlb builds netlink messages as the kernel writes them (nla_put,
// nla_nest_start, nlmsg_put), for the decoder's tests and fuzz seeds.
type nlb struct{}

func (nlb) attr(typ uint16, val []byte) []byte {
	b := make([]byte, unix.NLA_HDRLEN, nlAlign(unix.NLA_HDRLEN+len(val)))
	binary.NativeEndian.PutUint16(b[0:], uint16(unix.NLA_HDRLEN+len(val)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, val...)
	return append(b, make([]byte, cap(b)-len(b))...)
}

func (n nlb) u32(typ uint16, v uint32) []byte {
	return n.attr(typ, binary.NativeEndian.AppendUint32(nil, v))
}
func (n nlb) u8(typ uint16, v uint8) []byte        { return n.attr(typ, []byte{v}) }
func (n nlb) str(typ uint16, s string) []byte      { return n.attr(typ, append([]byte(s), 0)) }
func (n nlb) nest(typ uint16, in ...[]byte) []byte { return n.attr(typ, concat(in...)) }

func (nlb) msg(typ uint16, flags uint16, seq uint32, payload ...[]byte) []byte {
	p := concat(payload...)
	b := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(p))
	binary.NativeEndian.PutUint32(b[0:], uint32(unix.NLMSG_HDRLEN+len(p)))
	binary.NativeEndian.PutUint16(b[4:], typ)
	binary.NativeEndian.PutUint16(b[6:], flags)
	binary.NativeEndian.PutUint32(b[8:], seq)
	binary.NativeEndian.PutUint32(b[12:], 4242) // the socket's port id
	return append(b, p...)
}

func (n nlb) done(seq uint32, code int32) []byte {
	return n.msg(unix.NLMSG_DONE, unix.NLM_F_MULTI, seq, binary.NativeEndian.AppendUint32(nil, uint32(code)))
}

func (n nlb) errMsg(seq uint32, code int32) []byte {
	// struct nlmsgerr: the error, then the header of the request.
	p := binary.NativeEndian.AppendUint32(nil, uint32(code))
	return n.msg(unix.NLMSG_ERROR, 0, seq, p, make([]byte, unix.NLMSG_HDRLEN))
}

// qpEntry is one RDMA_NLDEV_ATTR_RES_QP_ENTRY as fill_res_qp_entry
// writes it; nested marks the nest with NLA_F_NESTED, as newer kernels do.
func (n nlb) qpEntry(nested bool, q LiveQP, typ, state uint8) []byte {
	var in [][]byte
	if q.Port != 0 {
		in = append(in, n.u32(nldevAttrPortIndex, q.Port))
	}
	in = append(in, n.u32(nldevAttrResLQPN, q.QPN), n.u32(25 /* SQ_PSN */, 0), n.u8(24 /* PATH_MIG_STATE */, 2),
		n.u8(nldevAttrResType, typ), n.u8(nldevAttrResState, state))
	if q.KernName != "" {
		in = append(in, n.str(nldevAttrResKernName, q.KernName))
	} else if q.PID != 0 {
		in = append(in, n.u32(nldevAttrResPID, q.PID))
	}
	in = append(in, n.u32(60 /* PDN */, 7))
	t := uint16(nldevAttrResQPEntry)
	if nested {
		t |= unix.NLA_F_NESTED
	}
	return n.nest(t, in...)
}

func (n nlb) qpAnswer(seq, index uint32, name string, nested bool, entries ...[]byte) []byte {
	t := uint16(nldevAttrResQP)
	if nested {
		t |= unix.NLA_F_NESTED
	}
	return n.msg(rdmaNLType(nldevCmdResQPGet), unix.NLM_F_MULTI, seq,
		n.u32(nldevAttrDevIndex, index), n.str(nldevAttrDevName, name), n.nest(t, entries...))
}

func concat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

var (
	gsi    = LiveQP{QPN: 1, Type: "GSI", State: "RTS", Port: 1, KernName: "ib_core"}
	xrcTgt = LiveQP{QPN: 0x1a2b, Type: "XRC_TGT", State: "RTR", Port: 1, PID: 31337}
	rc     = LiveQP{QPN: 17, Type: "RC", State: "INIT", PID: 4242}
)

// rdmanlCases: answers to a QP dump of device 3 (rxe0), request 7.
func rdmanlCases() []struct {
	name  string
	bytes []byte
	qps   []LiveQP
	done  bool
	err   string
} {
	var n nlb
	return []struct {
		name  string
		bytes []byte
		qps   []LiveQP
		done  bool
		err   string
	}{
		{"rxe-gsi", concat(n.qpAnswer(7, 3, "rxe0", false, n.qpEntry(false, gsi, 1, 3)), n.done(7, 0)),
			[]LiveQP{gsi}, true, ""},
		{"nested-flags", concat(n.qpAnswer(7, 3, "rxe0", true, n.qpEntry(true, gsi, 1, 3), n.qpEntry(true, xrcTgt, 10, 2), n.qpEntry(true, rc, 2, 1)), n.done(7, 0)),
			[]LiveQP{gsi, xrcTgt, rc}, true, ""},
		{"two-parts", concat(n.qpAnswer(7, 3, "rxe0", false, n.qpEntry(false, gsi, 1, 3)), n.qpAnswer(7, 3, "rxe0", false, n.qpEntry(false, xrcTgt, 10, 2))),
			[]LiveQP{gsi, xrcTgt}, false, ""},
		{"no-qps", concat(n.qpAnswer(7, 3, "rxe0", false), n.done(7, 0)), nil, true, ""},
		{"late-answer-of-another-request", concat(n.qpAnswer(6, 3, "rxe0", false, n.qpEntry(false, rc, 2, 1)), n.qpAnswer(7, 3, "rxe0", false, n.qpEntry(false, gsi, 1, 3)), n.done(7, 0)),
			[]LiveQP{gsi}, true, ""},
		{"refused-einval", n.errMsg(7, -int32(syscall.EINVAL)), nil, false, "EINVAL"},
		{"done-with-eperm", n.done(7, -int32(syscall.EPERM)), nil, false, "EPERM"},
		{"another-device", concat(n.qpAnswer(7, 4, "rxe1", false, n.qpEntry(false, gsi, 1, 3))), nil, false, "QPs of device 4 in answer to a request for device 3"},
		{"entry-without-state", n.qpAnswer(7, 3, "rxe0", false, n.nest(nldevAttrResQPEntry, n.u32(nldevAttrResLQPN, 5), n.u8(nldevAttrResType, 2))), nil, false, "without its number, type or state"},
		{"attribute-past-the-end", n.msg(rdmaNLType(nldevCmdResQPGet), unix.NLM_F_MULTI, 7, n.u32(nldevAttrDevIndex, 3), []byte{200, 0, nldevAttrResQP, 0}), nil, false, "attribute 19 of length 200"},
		{"message-cut-short", n.qpAnswer(7, 3, "rxe0", false, n.qpEntry(false, gsi, 1, 3))[:30], nil, false, "netlink message of length"},
		{"short-u32", n.qpAnswer(7, 3, "rxe0", false, n.nest(nldevAttrResQPEntry, n.attr(nldevAttrResLQPN, []byte{1, 0}))), nil, false, "2 bytes, want a u32"},
		{"unexpected-type", n.msg(rdmaNLType(nldevCmdGet), unix.NLM_F_MULTI, 7, n.u32(nldevAttrDevIndex, 3)), nil, false, "type 0x1401 in answer to 0x140a"},
	}
}

// readHex reads a golden file of hex bytes; # starts a comment.
func readHex(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestDecodeRDMANetlink ./verbs -update writes it)", err)
	}
	var digits strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		line, _, _ = strings.Cut(line, "#")
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

func writeHex(t *testing.T, path, name string, b []byte) {
	t.Helper()
	var s strings.Builder
	fmt.Fprintf(&s, "# %s: netlink messages answering an RDMA_NLDEV_CMD_RES_QP_GET dump (little-endian, as the kernel\n# writes them), made by rdmanl_test.go's builder; go test ./verbs -run TestDecodeRDMANetlink -update rewrites it.\n", name)
	for i := 0; i < len(b); i += 16 {
		s.WriteString(hex.EncodeToString(b[i:min(i+16, len(b))]) + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// TestDecodeRDMANetlink decodes the golden answers: the QPs each holds,
// whether the dump ended, or the error.
func TestDecodeRDMANetlink(t *testing.T) {
	if !littleEndian() {
		t.Skip("the golden bytes are little-endian, as the kernel writes them on this test's usual machines")
	}
	for _, tt := range rdmanlCases() {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join("testdata", "rdmanl", tt.name+".hex")
			if *golden.Update {
				writeHex(t, path, tt.name, tt.bytes)
			}
			b := readHex(t, path)
			if !reflect.DeepEqual(b, tt.bytes) {
				t.Fatalf("%s differs from what the builder makes: run with -update if the builder changed on purpose", path)
			}
			var got []LiveQP
			done, err := decodeDumpChunk(b, rdmaNLType(nldevCmdResQPGet), 7, func(p []byte) error {
				qps, err := decodeQPs(p, 3)
				got = append(got, qps...)
				return err
			})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if done != tt.done || !reflect.DeepEqual(got, tt.qps) {
				t.Errorf("done %v qps %+v, want %v %+v", done, got, tt.done, tt.qps)
			}
		})
	}
}

func TestDecodeDevice(t *testing.T) {
	var n nlb
	tests := []struct {
		name    string
		payload []byte
		want    nlDevice
		err     bool
	}{
		{"rxe0", concat(n.u32(nldevAttrDevIndex, 3), n.str(nldevAttrDevName, "rxe0"), n.u32(nldevAttrPortIndex, 1), n.str(5, "0.0.0")), nlDevice{3, "rxe0"}, false},
		{"no name", n.u32(nldevAttrDevIndex, 3), nlDevice{}, true},
		{"no index", n.str(nldevAttrDevName, "rxe0"), nlDevice{}, true},
	}
	for _, tt := range tests {
		got, err := decodeDevice(tt.payload)
		if (err != nil) != tt.err || (!tt.err && got != tt.want) {
			t.Errorf("%s: %+v %v, want %+v (error %v)", tt.name, got, err, tt.want, tt.err)
		}
	}
}

// TestRDMANetlinkErrno: the kernel's errno reaches the caller, wrapped in
// one line that names what failed.
func TestRDMANetlinkErrno(t *testing.T) {
	var n nlb
	_, err := decodeDumpChunk(n.errMsg(1, -int32(syscall.EOPNOTSUPP)), rdmaNLType(nldevCmdResQPGet), 1, nil)
	var ke *nlErrnoError
	if !errors.As(err, &ke) || ke.errno != syscall.EOPNOTSUPP {
		t.Fatalf("%v, want the kernel's EOPNOTSUPP", err)
	}
	ne := netlinkFailure("listing the QPs of rxe0", err)
	if !errors.Is(ne, syscall.EOPNOTSUPP) || !strings.Contains(ne.Error(), "listing the QPs of rxe0") || strings.Contains(ne.Error(), "\n") {
		t.Errorf("%v", ne)
	}
}

// TestLiveQPsThisKernel asks this machine's kernel. Without RDMA netlink
// (no ib_core, as on most CI machines) the error says so in one line;
// with it, an unknown device is named with the ones the kernel has.
func TestLiveQPsThisKernel(t *testing.T) {
	_, err := LiveQPs("xrcbench-no-such-device")
	if err == nil {
		t.Fatal("a device named xrcbench-no-such-device has QPs")
	}
	var ne *NetlinkError
	if !errors.As(err, &ne) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("%v (%T), want a one-line NetlinkError", err, err)
	}
	fd, serr := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_RDMA)
	if serr == nil {
		unix.Close(fd)
		if !strings.Contains(err.Error(), `has no device named "xrcbench-no-such-device"`) {
			t.Errorf("this kernel has RDMA netlink; got %v, want the unknown device named", err)
		}
		t.Logf("this kernel has RDMA netlink: %v", err)
		return
	}
	if !errors.Is(err, serr) || !strings.Contains(err.Error(), "the kernel has no RDMA netlink") {
		t.Errorf("socket NETLINK_RDMA failed %v; LiveQPs said %v, want the clear reason", serr, err)
	}
	if _, err := LiveQPsAll(); err == nil || !strings.Contains(err.Error(), "the kernel has no RDMA netlink") {
		t.Errorf("LiveQPsAll: %v", err)
	}
	t.Logf("this kernel: %v", err)
}

// TestRDMANetlinkABI checks the numbers rdmanl.go uses against the
// installed uapi header, compiled by the C compiler, where both exist.
func TestRDMANetlinkABI(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		testenv.Skip(t, testenv.CC, "no C compiler to read <rdma/rdma_netlink.h> with")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "abi.c")
	prog := `#include <stdio.h>
#include <rdma/rdma_netlink.h>
int main(void) {
	printf("%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET, RDMA_NLDEV_CMD_RES_QP_GET,
		RDMA_NLDEV_ATTR_DEV_INDEX, RDMA_NLDEV_ATTR_DEV_NAME, RDMA_NLDEV_ATTR_PORT_INDEX, RDMA_NLDEV_ATTR_RES_QP,
		RDMA_NLDEV_ATTR_RES_QP_ENTRY, RDMA_NLDEV_ATTR_RES_LQPN, RDMA_NLDEV_ATTR_RES_TYPE, RDMA_NLDEV_ATTR_RES_STATE,
		RDMA_NLDEV_ATTR_RES_PID, RDMA_NLDEV_ATTR_RES_KERN_NAME, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET),
		RDMA_NLDEV_ATTR_RES_PDN);
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "abi")
	if out, err := exec.Command(cc, "-o", bin, src).CombinedOutput(); err != nil {
		testenv.Skip(t, testenv.Headers, "<rdma/rdma_netlink.h> is not installed (apt-get install libibverbs-dev or linux-libc-dev): %s", strings.SplitN(string(out), "\n", 2)[0])
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", rdmaNLNLDev, nldevCmdGet, nldevCmdResQPGet,
		nldevAttrDevIndex, nldevAttrDevName, nldevAttrPortIndex, nldevAttrResQP, nldevAttrResQPEntry, nldevAttrResLQPN,
		nldevAttrResType, nldevAttrResState, nldevAttrResPID, nldevAttrResKernName, rdmaNLType(nldevCmdResQPGet), 60)
	if string(out) != want {
		t.Errorf("the header says %q, rdmanl.go (and the tests' PDN) %q", out, want)
	}
}

// FuzzDecodeRDMANetlink: any bytes from the socket decode to QPs or fail
// with an error; never a panic or a read past the buffer. What decodes
// encodes back (through the tests' builder) to the same QPs.
func FuzzDecodeRDMANetlink(f *testing.F) {
	for _, tt := range rdmanlCases() {
		f.Add(tt.bytes)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got []LiveQP
		_, err := decodeDumpChunk(b, rdmaNLType(nldevCmdResQPGet), 7, func(p []byte) error {
			qps, err := decodeQPs(p, 3)
			got = append(got, qps...)
			return err
		})
		if err != nil {
			return
		}
		var n nlb
		var entries [][]byte
		for _, q := range got {
			typ, state, ok := qpCodes(q)
			if !ok {
				return // a code with no name: written as typeN/stateN
			}
			entries = append(entries, n.qpEntry(false, q, typ, state))
		}
		var again []LiveQP
		if _, err := decodeDumpChunk(n.qpAnswer(7, 3, "x", false, entries...), rdmaNLType(nldevCmdResQPGet), 7, func(p []byte) error {
			qps, err := decodeQPs(p, 3)
			again = append(again, qps...)
			return err
		}); err != nil {
			t.Fatalf("re-encoded QPs %+v do not decode: %v", got, err)
		}
		for i := range got {
			if got[i].KernName != "" {
				got[i].PID = 0 // the kernel writes one or the other
			}
		}
		if !reflect.DeepEqual(again, got) {
			t.Fatalf("decoded %+v, re-encoded and decoded %+v", got, again)
		}
	})
}

// qpCodes is the inverse of the names: the type and state codes of q.
func qpCodes(q LiveQP) (typ, state uint8, ok bool) {
	var ty, st bool
	for c, n := range qpTypeNames {
		if n == q.Type {
			typ, ty = c, true
		}
	}
	for c, n := range qpStateNames {
		if n == q.State {
			state, st = uint8(c), true
		}
	}
	return typ, state, ty && st
}
