package verbs

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
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

// Cost is the sim device's cost model: a busy-wait per operation kind,
// and the kernel's locking around them (docs/design.md, "The sim's
// locks"). Destroy is paid on top of Unreg when the last registration
// goes, and Reset on top of both when the QP was out of RESET then (INIT
// or RTR): the driver resets it before destroying it. Modify is paid per
// transition up (RESET to INIT, INIT to RTR), Reset for a move back. Reg
// and Unreg are paid outside the domain's lock, as the kernel holds the
// XRCD's lock only for the lookup and the handle's link; Create, Modify,
// Destroy and Reset are commands to the driver, paid in one of CmdQ
// command-queue slots.
type Cost struct {
	Create, Reg, Unreg, Destroy, Modify, Reset time.Duration
	// CmdQ is the command queue's depth, the commands in flight at once;
	// 0 is DefaultCmdQ.
	CmdQ int
	// Lookup is how a reg finds its QP: LookupXarray (Linux 5.9 on,
	// under the domain's lock shared) or LookupList (before: a walk of
	// the domain's QPs under its mutex). "" is LookupXarray.
	Lookup string
	// Scan is LookupList's walk, per live target QP of the domain, paid
	// under the domain's mutex.
	Scan time.Duration
}

const (
	// DefaultCmdQ is mlx5's command interface: at most 31 in flight.
	DefaultCmdQ = 31
	// MaxCmdQ is the deepest command queue the sim device has.
	MaxCmdQ = 64
	// LookupXarray and LookupList are Cost.Lookup's values.
	LookupXarray = "xarray"
	LookupList   = "list"
)

// IsZero reports whether the cost model adds nothing.
func (c Cost) IsZero() bool { return c == Cost{} }

// String writes the cost in the form ParseCost reads; "" when zero.
func (c Cost) String() string {
	var parts []string
	for _, kv := range []struct {
		k string
		v time.Duration
	}{{"create", c.Create}, {"reg", c.Reg}, {"unreg", c.Unreg}, {"destroy", c.Destroy}, {"modify", c.Modify}, {"reset", c.Reset},
		{"scan", c.Scan}} {
		if kv.v != 0 {
			parts = append(parts, kv.k+"="+kv.v.String())
		}
	}
	if c.CmdQ != 0 {
		parts = append(parts, fmt.Sprintf("cmdq=%d", c.CmdQ))
	}
	if c.Lookup != "" {
		parts = append(parts, "lookup="+c.Lookup)
	}
	return strings.Join(parts, ",")
}

// ParseCost reads a cost spec such as "reg=2us,destroy=300us", with the
// model's keys cmdq=N (1 to MaxCmdQ), lookup=xarray|list and scan=DURATION
// (with lookup=list only). The empty string is the zero cost.
func ParseCost(spec string) (Cost, error) {
	var c Cost
	if strings.TrimSpace(spec) == "" {
		return c, nil
	}
	fields := map[string]*time.Duration{"create": &c.Create, "reg": &c.Reg, "unreg": &c.Unreg, "destroy": &c.Destroy,
		"modify": &c.Modify, "reset": &c.Reset, "scan": &c.Scan}
	model := map[string]func(v string) error{
		"cmdq": func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxCmdQ {
				return fmt.Errorf("cmdq %q: want a depth from 1 to %d", v, MaxCmdQ)
			}
			c.CmdQ = n
			return nil
		},
		"lookup": func(v string) error {
			if v != LookupXarray && v != LookupList {
				return fmt.Errorf("lookup %q: want %s (Linux 5.9 on) or %s (before)", v, LookupXarray, LookupList)
			}
			c.Lookup = v
			return nil
		},
	}
	keys := slices.Sorted(maps.Keys(fields))
	keys = slices.Sorted(slices.Values(append(keys, "cmdq", "lookup")))
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Cost{}, fmt.Errorf("bad cost %q: want OP=DURATION, e.g. reg=2us", part)
		}
		f, known := fields[k]
		set, isModel := model[k]
		if !known && !isModel {
			return Cost{}, fmt.Errorf("bad cost %q: unknown operation %q (want %s)", part, k, strings.Join(keys, ", "))
		}
		if seen[k] {
			return Cost{}, fmt.Errorf("bad cost %q: %s given twice", part, k)
		}
		seen[k] = true
		if isModel {
			if err := set(v); err != nil {
				return Cost{}, fmt.Errorf("bad cost %q: %v", part, err)
			}
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return Cost{}, fmt.Errorf("bad cost %q: %q is not a duration like 2us or 300us", part, v)
		}
		if d > 10*time.Second {
			return Cost{}, fmt.Errorf("bad cost %q: at most 10s per operation", part)
		}
		if k == "scan" && d > time.Millisecond {
			return Cost{}, fmt.Errorf("bad cost %q: at most 1ms per target QP", part)
		}
		*f = d
	}
	if c.Scan != 0 && c.Lookup != LookupList {
		return Cost{}, fmt.Errorf("bad cost %q: scan is the pre-5.9 list walk, give it with lookup=list", spec)
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
