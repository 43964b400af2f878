package verbs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/xrcbench/xrcbench/internal/facts"
	"github.com/xrcbench/xrcbench/results"
)

// Op is the kind of operation a batch runs.
type Op int

const (
	OpCreate Op = iota // create an XRC receive QP (the creator is registered, S1)
	OpReg              // register with an existing QP (S2)
	OpUnreg            // unregister; the last unreg destroys the QP (S4, S5)
	OpModify           // move a held QP from RESET to the device's QP state (Options.QPState)
	// OpElect, in a storm only (RunStorm), elects the creator of its
	// slot's QP among the ranks by compare-and-swap on the slot: the
	// winner creates, the others register; the step's Op says which it
	// became once done.
	OpElect
)

func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpReg:
		return "reg"
	case OpUnreg:
		return "unreg"
	case OpModify:
		return "modify"
	case OpElect:
		return "elect"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// QPState is a state of an XRC receive QP (enum ibv_qp_state), as far as
// the benchmark moves one: production (Open MPI's XOOB, MVAPICH2) moves
// the receive QP to INIT and then RTR before anyone registers with it.
type QPState int

const (
	QPReset QPState = iota // as created
	QPInit                 // port, pkey index and access flags set
	QPRTR                  // ready to receive: an address, path MTU and a destination QP
)

// QPStates lists the states in order, as --qp-state names them.
var QPStates = []QPState{QPReset, QPInit, QPRTR}

func (s QPState) String() string {
	switch s {
	case QPReset:
		return "reset"
	case QPInit:
		return "init"
	case QPRTR:
		return "rtr"
	}
	return fmt.Sprintf("QPState(%d)", int(s))
}

// ParseQPState reads a --qp-state value: reset, init or rtr.
func ParseQPState(s string) (QPState, error) {
	for _, q := range QPStates {
		if q.String() == s {
			return q, nil
		}
	}
	return 0, fmt.Errorf("unknown QP state %q: want reset, init or rtr", s)
}

// MaxQPN is the largest QP number: QP numbers are 24 bits.
const MaxQPN = 1<<24 - 1

// Destroyed says whether an unreg destroyed its QP, when the provider knows.
type Destroyed int8

const (
	DestroyUnknown Destroyed = iota // the provider cannot tell (rdma, legacy, null)
	NotDestroyed                    // other registrants remain
	WasDestroyed                    // this was the last registration
)

func (d Destroyed) String() string {
	switch d {
	case NotDestroyed:
		return "kept"
	case WasDestroyed:
		return "destroyed"
	}
	return "unknown"
}

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotSupported: the provider or device cannot do XRC, or this build
	// lacks the provider.
	ErrNotSupported = errors.New("not supported")
	// ErrClosed: the device or domain was closed.
	ErrClosed = errors.New("closed")
	// ErrBadPath: the port or GID index the user chose (Options.Port,
	// Options.GIDIndex) does not exist on the device or cannot be used
	// (a port that is not ACTIVE): bad input, not a failed run.
	ErrBadPath = errors.New("no such port or GID")
	// ErrNoSuchDevice: no device has the name the user gave
	// (Options.Device): bad input, not a failed run.
	ErrNoSuchDevice = errors.New("no such device")
	// ErrNoOpenQP: the device has XRC domains, but its provider does not
	// implement ibv_open_qp (qedr), so no second registrant can share a
	// receive QP: the rdma provider refuses it unless
	// Options.AllowNoOpenQP.
	ErrNoOpenQP = errors.New("the provider has XRC domains but no ibv_open_qp")
)

// OpError is the error of one verbs operation. It wraps a syscall.Errno,
// so errors.Is(err, syscall.EINVAL) works for every provider.
type OpError struct {
	Op       string // "open_device", "open_domain", "close_domain", "create", "reg", "unreg", ...
	Provider string
	Domain   string // domain file, when there is one
	QPN      uint32
	HasQPN   bool
	Err      error
}

func (e *OpError) Error() string {
	s := e.Op
	if e.HasQPN {
		s += fmt.Sprintf(" qp %#06x", e.QPN)
	}
	if e.Domain != "" {
		s += " in domain " + e.Domain
	}
	if e.Provider != "" {
		s += " (" + e.Provider + ")"
	}
	return s + ": " + e.Err.Error()
}

func (e *OpError) Unwrap() error { return e.Err }

// errnoErr turns a C return value (0 or a positive errno) into an error.
func errnoErr(rc int) error {
	if rc == 0 {
		return nil
	}
	return syscall.Errno(rc)
}

// DeviceInfo describes an opened device. Fields a provider does not know
// are empty.
type DeviceInfo struct {
	Name      string `json:"name"`
	Provider  string `json:"provider"`
	XRC       bool   `json:"xrc"`
	OpenQP    bool   `json:"open_qp"`    // the upstream ibv_open_qp path is usable
	LegacyAPI bool   `json:"legacy_api"` // ibv_reg_xrc_rcv_qp is usable
	Semantics string `json:"semantics,omitempty"`
	// LegacyFlavor: for the legacy provider, which library implements
	// the legacy API (FlavorOFED1 or FlavorMlnxCompat).
	LegacyFlavor string `json:"legacy_flavor,omitempty"`
	// Registrant is what one registration belongs to under the device's
	// semantics: RegistrantContext (a device context, so each benchmark
	// thread is one), RegistrantProcess (MLNX_OFED: every thread of a
	// process shares one), or RegistrantHandle (upstream: each open).
	Registrant   string            `json:"registrant,omitempty"`
	FWVer        string            `json:"fw_ver,omitempty"`
	HWVer        string            `json:"hw_ver,omitempty"`
	VendorID     uint32            `json:"vendor_id,omitempty"`
	VendorPartID uint32            `json:"vendor_part_id,omitempty"`
	NodeGUID     string            `json:"node_guid,omitempty"`
	MaxQP        int               `json:"max_qp,omitempty"`
	Ports        int               `json:"ports,omitempty"`
	Driver       string            `json:"driver,omitempty"`
	NUMANode     int               `json:"numa_node"`         // -1 when unknown
	Library      string            `json:"library,omitempty"` // e.g. rdma-core version
	Extra        map[string]string `json:"extra,omitempty"`
	// Capabilities: each upstream XRC call the rdma provider needs, and
	// how its presence was established (by calling it). Empty where the
	// calls cannot be made (legacy dlsym path, sim, null).
	Capabilities []Capability `json:"capabilities,omitempty"`
	// TestDouble is true when the library is xrcbench's libibverbs test
	// double (fakeverbs/), recognised by a symbol only it exports: the
	// figures measured through it are not hardware.
	TestDouble bool `json:"is_test_double,omitempty"`
	// PortInfo: each port's state, active MTU and link layer, as
	// ibv_query_port answered, and its GID table from sysfs (devices
	// lists them; absent elsewhere).
	PortInfo []PortInfo `json:"port_info,omitempty"`
	// Path is the port and GID an opened device moves QPs through
	// (rdma, legacy); nil where none is chosen (--qp-state reset
	// without --ib-port or --gid-index, or a device without XRC).
	Path *PathInfo `json:"path,omitempty"`
	// LiveQPs is how many QPs the kernel lists for the device through
	// RDMA netlink, LiveQPNs their numbers in increasing order; absent,
	// with LiveQPsNote ("n/a: <why>"), where the kernel could not be asked.
	LiveQPs     *int     `json:"live_qps,omitempty"`
	LiveQPNs    []uint32 `json:"live_qpns,omitempty"`
	LiveQPsNote string   `json:"live_qps_note,omitempty"`
	// BOM is the device's part of a result's bill of materials (driver
	// and its version, board_id, PCIe link, ...), each fact or why it
	// could not be read; nil for providers without a sysfs device.
	BOM *results.DeviceBOM `json:"bom,omitempty"`
	// sysfsDir is the device's sysfs directory (libibverbs' ibdev_path),
	// where DeviceQPs finds the test double's device.
	sysfsDir string
}

// SysfsDir is the device's sysfs directory (libibverbs' ibdev_path), ""
// where the provider has none: device discovery reads it.
func (in DeviceInfo) SysfsDir() string { return in.sysfsDir }

// PortInfo is one port of a device.
type PortInfo struct {
	Port      int    `json:"port"`
	State     string `json:"state"`                // DOWN, INIT, ARMED, ACTIVE, ...
	ActiveMTU int    `json:"active_mtu,omitempty"` // bytes; absent when the port reported none
	LinkLayer string `json:"link_layer"`           // InfiniBand or Ethernet
	// GIDs is the port's GID table as sysfs lists it (non-empty entries
	// only), so a user can choose --gid-index; GIDsNote says why it is
	// absent where sysfs could not be read.
	GIDs     []GIDEntry `json:"gids,omitempty"`
	GIDsNote string     `json:"gids_note,omitempty"`
}

// GIDEntry is one entry of a port's GID table, as sysfs lists it.
type GIDEntry = facts.GID

// PathInfo is the port and GID QPs are moved through, and whether the
// user chose them (--ib-port, --gid-index) or the provider did.
type PathInfo struct {
	Port       int    `json:"port"`
	PortChosen bool   `json:"port_chosen"`
	GIDIndex   int    `json:"gid_index"` // -1: no GID (InfiniBand, addressed by LID)
	GIDType    string `json:"gid_type,omitempty"`
	GID        string `json:"gid,omitempty"`
	GIDChosen  bool   `json:"gid_chosen"`
}

// Capability is one upstream XRC call (open_xrcd, create_qp_ex, open_qp),
// whether the device's provider implements it, and how that was found out.
type Capability struct {
	Name      string `json:"name"`
	Supported bool   `json:"supported"`
	How       string `json:"how"`
}

// Options selects and configures a provider.
type Options struct {
	Provider string // "sim" (default), "null", "rdma", "legacy"
	Device   string // rdma/legacy: device name, "" for the first with XRC
	// QPState is the state OpModify (and MoveQP) moves a created QP to.
	// The zero value, QPReset, moves nothing. rdma and legacy prepare
	// what RTR needs (the port's address, a local XRC send QP whose
	// number is the destination) when the device opens, and fail there
	// when the port is down or has no address.
	QPState QPState
	// Port is the port QPs are moved through (rdma, legacy; perftest's
	// -i/--ib-port); 0 is automatic: the first ACTIVE port, else 1.
	Port int
	// GIDIndex is the entry of the port's GID table RTR addresses (rdma,
	// legacy; perftest's -x/--gid-index); nil is automatic: on RoCE the
	// first RoCE v2 entry, else the first non-empty one; on InfiniBand
	// none (the LID). A pointer, so the zero Options stay automatic.
	GIDIndex *int
	Sim      SimOptions
	// AllowNoOpenQP (rdma) opens a device whose provider has XRC domains
	// but no ibv_open_qp, which is otherwise refused (ErrNoOpenQP): its
	// creates and destroys work, every reg fails EOPNOTSUPP. conform sets
	// it to check what such a device can do (S1) and say why the rest
	// cannot run.
	AllowNoOpenQP bool
}

// wantGID is o.GIDIndex as the C side takes it: -1 for automatic.
func (o Options) wantGID() int {
	if o.GIDIndex == nil {
		return -1
	}
	return *o.GIDIndex
}

// Device is one opened device context: one registrant. Each benchmark
// thread opens its own, so threads never undo each other's registrations.
// A Device and its domains are not safe for concurrent use.
type Device struct {
	provider string
	ops      cHandle // *C.struct_xb_ops
	handle   cHandle // the provider's device context
	info     DeviceInfo
	domains  []*Domain // open
	closed   bool
}

// Open opens a device context through the provider opts names.
func Open(opts Options) (*Device, error) {
	if opts.Provider == "" {
		opts.Provider = "sim"
	}
	p, ok := providers[opts.Provider]
	if !ok {
		return nil, &OpError{Op: "open_device", Provider: opts.Provider,
			Err: fmt.Errorf("unknown provider %q (have %s)", opts.Provider, providerNames())}
	}
	if p.open == nil {
		return nil, &OpError{Op: "open_device", Provider: opts.Provider,
			Err: fmt.Errorf("%w: %s", ErrNotSupported, p.Reason)}
	}
	d, err := p.open(opts)
	if err != nil {
		var oe *OpError
		if !errors.As(err, &oe) {
			err = &OpError{Op: "open_device", Provider: opts.Provider, Err: err}
		}
		return nil, err
	}
	d.provider = opts.Provider
	d.info.Provider = opts.Provider
	if d.info.Registrant == "" {
		d.info.Registrant = registrantOf(Semantics(d.info.Semantics))
	}
	return d, nil
}

// Info describes the device.
func (d *Device) Info() DeviceInfo { return d.info }

// Provider names the provider the device was opened through.
func (d *Device) Provider() string { return d.provider }

// Close closes the device context. Open domains are an error (EBUSY). A
// close that fails leaves the device open, so Close can be tried again.
func (d *Device) Close() error {
	if d.closed {
		return nil
	}
	if len(d.domains) > 0 {
		return &OpError{Op: "close_device", Provider: d.provider,
			Err: fmt.Errorf("%w: %d domain(s) still open", syscall.EBUSY, len(d.domains))}
	}
	if err := errnoErr(cCloseDevice(d.ops, d.handle)); err != nil {
		return &OpError{Op: "close_device", Provider: d.provider, Err: err}
	}
	d.closed = true
	return nil
}

// Abandon gives the device up with whatever its domains still hold, as
// process exit would: the provider drops their registrations (a last one
// destroys its QP) and their domain handles, then closes the context. The
// domains are closed afterwards whatever the outcome (the provider has let
// go of them); a failed close of the context is returned, and the device
// stays open for Close or Abandon to try again.
func (d *Device) Abandon() error {
	if d.closed {
		return nil
	}
	err := errnoErr(cCloseDevice(d.ops, d.handle))
	for _, m := range d.domains {
		m.closed = true
	}
	d.domains = nil
	if err != nil {
		return &OpError{Op: "abandon_device", Provider: d.provider, Err: err}
	}
	d.closed = true
	return nil
}

// OpenDomain opens the XRC domain named by the file at path, creating the
// file (0600) when create is set. All registrants that open the same file
// (the same inode) share one domain. Symbolic links are not followed.
func (d *Device) OpenDomain(path string, create bool) (*Domain, error) {
	if d.closed {
		return nil, &OpError{Op: "open_domain", Provider: d.provider, Domain: path, Err: ErrClosed}
	}
	flags := os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	if create {
		flags = os.O_RDWR | os.O_CREATE | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	}
	if dir := filepath.Dir(path); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, &OpError{Op: "open_domain", Provider: d.provider, Domain: path,
				Err: fmt.Errorf("directory %s does not exist: %w", dir, syscall.ENOENT)}
		}
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &OpError{Op: "open_domain", Provider: d.provider, Domain: path, Err: err}
	}
	defer f.Close()
	h, rc := cOpenDomain(d.ops, d.handle, int(f.Fd()))
	if rc != 0 {
		err := errnoErr(rc)
		if !d.info.XRC && (err == syscall.ENOSYS || err == syscall.EOPNOTSUPP) {
			// S11: say which device and why, not just the errno.
			err = fmt.Errorf("device %s lacks XRC (IBV_DEVICE_XRC is not in its device_cap_flags): %w", d.info.Name, err)
		}
		return nil, &OpError{Op: "open_domain", Provider: d.provider, Domain: path, Err: err}
	}
	m := &Domain{dev: d, handle: h, path: path}
	d.domains = append(d.domains, m)
	return m, nil
}

// Domain is one registrant's handle on an XRC domain.
type Domain struct {
	dev    *Device
	handle cHandle
	path   string
	closed bool
	one    *Batch // scratch for the single-operation calls
}

// Path is the domain file.
func (m *Domain) Path() string { return m.path }

// Device is the device context the domain was opened on.
func (m *Domain) Device() *Device { return m.dev }

func (m *Domain) opErr(op string, qpn uint32, hasQPN bool, err error) error {
	return &OpError{Op: op, Provider: m.dev.provider, Domain: m.path, QPN: qpn, HasQPN: hasQPN, Err: err}
}

// Close closes the domain handle. It fails with EBUSY while this
// registrant still holds registrations in the domain (S9).
func (m *Domain) Close() error {
	if m.closed {
		return nil
	}
	if err := errnoErr(cCloseDomain(m.dev.ops, m.handle)); err != nil {
		return m.opErr("close_domain", 0, false, err)
	}
	m.closed = true
	m.dev.domains = slices.DeleteFunc(m.dev.domains, func(x *Domain) bool { return x == m })
	return nil
}

// CreateRcvQP creates an XRC receive QP in the domain and returns its
// number. The creator is registered with it implicitly (S1).
func (m *Domain) CreateRcvQP() (uint32, error) {
	b, err := m.single(OpCreate, 0)
	if err != nil {
		return 0, m.opErr("create", 0, false, err)
	}
	if e := b.Errno(0); e != 0 {
		return 0, m.opErr("create", 0, false, e)
	}
	return b.QPNs[0], nil
}

// Reg registers this registrant with QP qpn (S2, S3).
func (m *Domain) Reg(qpn uint32) error {
	if qpn > MaxQPN {
		return m.opErr("reg", qpn, true, fmt.Errorf("%w: QP number exceeds 24 bits", syscall.EINVAL))
	}
	b, err := m.single(OpReg, qpn)
	if err == nil {
		if e := b.Errno(0); e != 0 {
			err = e
		}
	}
	if err != nil {
		return m.opErr("reg", qpn, true, err)
	}
	return nil
}

// Unreg unregisters this registrant from QP qpn (S4). When it was the last
// registration the QP is destroyed (S5); the result says so when the
// provider knows.
func (m *Domain) Unreg(qpn uint32) (Destroyed, error) {
	if qpn > MaxQPN {
		return DestroyUnknown, m.opErr("unreg", qpn, true, fmt.Errorf("%w: QP number exceeds 24 bits", syscall.EINVAL))
	}
	b, err := m.single(OpUnreg, qpn)
	if err == nil {
		if e := b.Errno(0); e != 0 {
			err = e
		}
	}
	if err != nil {
		return DestroyUnknown, m.opErr("unreg", qpn, true, err)
	}
	return b.Destroyed(0), nil
}

// MoveQP moves QP qpn, which this registrant holds, from RESET to the
// device's QP state (Options.QPState), each transition in order: what a
// creator does before anyone registers.
func (m *Domain) MoveQP(qpn uint32) error {
	if qpn > MaxQPN {
		return m.opErr("modify", qpn, true, fmt.Errorf("%w: QP number exceeds 24 bits", syscall.EINVAL))
	}
	b, err := m.single(OpModify, qpn)
	if err == nil {
		if e := b.Errno(0); e != 0 {
			err = e
		}
	}
	if err != nil {
		return m.opErr("modify", qpn, true, err)
	}
	return nil
}

// ModifyQP makes one transition of QP qpn, which this registrant holds, to
// state, with the attributes the transition needs: the kernel refuses
// (EINVAL) a transition its qp_state_table lacks, such as RESET to RTR.
// Untimed; conform uses it.
func (m *Domain) ModifyQP(qpn uint32, state QPState) error {
	if m.closed {
		return m.opErr("modify", qpn, true, ErrClosed)
	}
	if qpn > MaxQPN || state < QPReset || state > QPRTR {
		return m.opErr("modify", qpn, true, fmt.Errorf("%w: QP %#x to state %v", syscall.EINVAL, qpn, state))
	}
	if err := errnoErr(cModify(m.dev.ops, m.handle, qpn, int(state))); err != nil {
		return m.opErr("modify to "+state.String(), qpn, true, err)
	}
	return nil
}

func (m *Domain) single(op Op, qpn uint32) (*Batch, error) {
	if m.one == nil {
		m.one = NewBatch(1)
	}
	m.one.QPNs[0] = qpn
	if _, err := m.RunBatch(op, m.one, 1); err != nil {
		return nil, err
	}
	return m.one, nil
}

// Batch holds the input and output of RunBatch. Allocate it once per
// thread and reuse it: RunBatch allocates nothing.
type Batch struct {
	QPNs   []uint32 // input for reg and unreg; output for create
	NS     []uint64 // duration of each operation in nanoseconds
	Status []uint32 // errno in the low 16 bits, destroy flags above
}

// NewBatch allocates a batch of n operations.
func NewBatch(n int) *Batch {
	return &Batch{QPNs: make([]uint32, n), NS: make([]uint64, n), Status: make([]uint32, n)}
}

// Len is the batch's capacity.
func (b *Batch) Len() int { return len(b.QPNs) }

// Errno is the errno of operation i, 0 on success.
func (b *Batch) Errno(i int) syscall.Errno { return syscall.Errno(b.Status[i] & statusErrnoMask) }

// Destroyed says whether unreg i destroyed its QP.
func (b *Batch) Destroyed(i int) Destroyed { return destroyedOf(b.Status[i]) }

func destroyedOf(s uint32) Destroyed {
	switch {
	case s&statusDestroyKnown == 0:
		return DestroyUnknown
	case s&statusDestroyed != 0:
		return WasDestroyed
	}
	return NotDestroyed
}

// RunBatch runs the first n operations of b as kind op in one call into C,
// timing each with one chained timer read. It returns how many operations
// failed; each failure's errno is in b.Status (a QP number over 24 bits
// fails with EINVAL without reaching the provider). The error is only for
// misuse: a closed domain, n out of range, an unknown op.
func (m *Domain) RunBatch(op Op, b *Batch, n int) (failed int, err error) {
	if m.closed {
		return 0, ErrClosed
	}
	if n < 0 || n > len(b.QPNs) || n > len(b.NS) || n > len(b.Status) {
		return 0, fmt.Errorf("%w: batch of %d operations in buffers of %d", syscall.EINVAL, n, len(b.QPNs))
	}
	if op < OpCreate || op > OpModify {
		return 0, fmt.Errorf("%w: unknown operation %d", syscall.EINVAL, int(op))
	}
	if n == 0 {
		return 0, nil
	}
	return cRunBatch(m.dev.ops, m.handle, op, b, n), nil
}
