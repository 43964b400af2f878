package verbs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Semantics selects which XRC API the sim device imitates.
type Semantics string

const (
	// Legacy: the OFED ibv_reg_xrc_rcv_qp API. Registration is idempotent
	// per registrant (S3) and unreg without registration is EINVAL (S8).
	Legacy Semantics = "legacy"
	// LegacyMlnx: the same calls as MLNX_OFED 2.x-4.x implements them,
	// over the upstream API with one table of QPs per process: the
	// process is the registrant, a second reg in it is EEXIST (S3) and an
	// unreg through any of its domains destroys its handle (S8).
	LegacyMlnx Semantics = "legacy-mlnx"
	// Upstream: rdma-core's ibv_open_qp API. Every open is a counted
	// handle (S3).
	Upstream Semantics = "upstream"
	// NoSemantics: the null provider keeps no state, by design.
	NoSemantics Semantics = "none"
)

// What a registration belongs to (DeviceInfo.Registrant).
const (
	RegistrantContext = "context"
	RegistrantProcess = "process"
	RegistrantHandle  = "handle"
)

// registrantOf is what a registration belongs to under semantics s; ""
// for the null provider, which keeps no registrations.
func registrantOf(s Semantics) string {
	switch s {
	case Legacy:
		return RegistrantContext
	case LegacyMlnx:
		return RegistrantProcess
	case Upstream:
		return RegistrantHandle
	}
	return ""
}

// ParseSemantics checks a --sim-semantics value.
func ParseSemantics(s string) (Semantics, error) {
	switch Semantics(s) {
	case Legacy, LegacyMlnx, Upstream:
		return Semantics(s), nil
	}
	return "", fmt.Errorf("unknown semantics %q: want legacy, legacy-mlnx or upstream", s)
}

// Cost is the sim device's cost model: a busy-wait per operation kind.
// Destroy is paid on top of Unreg when the last registration goes, and
// Reset on top of both when the QP was out of RESET then (INIT or RTR):
// the driver resets it before destroying it. Modify is paid per
// transition up (RESET to INIT, INIT to RTR), Reset for a move back. Costs
// are paid outside the device lock, as the kernel does its expensive work
// outside the XRCD lock, so an injected cost does not serialize unrelated
// operations.
type Cost struct {
	Create, Reg, Unreg, Destroy, Modify, Reset time.Duration
}

// IsZero reports whether the cost model adds nothing.
func (c Cost) IsZero() bool { return c == Cost{} }

// String writes the cost in the form ParseCost reads; "" when zero.
func (c Cost) String() string {
	var parts []string
	for _, kv := range []struct {
		k string
		v time.Duration
	}{{"create", c.Create}, {"reg", c.Reg}, {"unreg", c.Unreg}, {"destroy", c.Destroy}, {"modify", c.Modify}, {"reset", c.Reset}} {
		if kv.v != 0 {
			parts = append(parts, kv.k+"="+kv.v.String())
		}
	}
	return strings.Join(parts, ",")
}

// ParseCost reads a cost spec such as "reg=2us,destroy=300us". The empty
// string is the zero cost.
func ParseCost(spec string) (Cost, error) {
	var c Cost
	if strings.TrimSpace(spec) == "" {
		return c, nil
	}
	fields := map[string]*time.Duration{"create": &c.Create, "reg": &c.Reg, "unreg": &c.Unreg, "destroy": &c.Destroy,
		"modify": &c.Modify, "reset": &c.Reset}
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Cost{}, fmt.Errorf("bad cost %q: want OP=DURATION, e.g. reg=2us", part)
		}
		f, known := fields[k]
		if !known {
			return Cost{}, fmt.Errorf("bad cost %q: unknown operation %q (want %s)", part, k, strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
		if seen[k] {
			return Cost{}, fmt.Errorf("bad cost %q: %s given twice", part, k)
		}
		seen[k] = true
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return Cost{}, fmt.Errorf("bad cost %q: %q is not a duration like 2us or 300us", part, v)
		}
		if d > 10*time.Second {
			return Cost{}, fmt.Errorf("bad cost %q: at most 10s per operation", part)
		}
		*f = d
	}
	return c, nil
}

// SimOptions configures the sim device. Processes that open the same Dir
// share one device; the first to open it sets Cost, NoXRC and the
// capacities, and later openers must ask for the same (zero capacities mean
// "whatever the device has").
type SimOptions struct {
	Dir       string    // directory of the device, created 0700 when missing
	Semantics Semantics // of this registrant; "" is Legacy
	Cost      Cost
	NoXRC     bool // a device without XRC, for S11
	MaxQPs    int  // live QPs; 0 is DefaultSimMaxQPs
	MaxRegs   int  // registrants per QP; 0 is DefaultSimMaxRegs
}

const (
	DefaultSimMaxQPs  = 16384
	DefaultSimMaxRegs = 128
)
