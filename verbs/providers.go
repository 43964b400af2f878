package verbs

import (
	"sort"
	"strings"
)

// SimDeviceName is the name the sim provider's device reports.
const SimDeviceName = "sim0"

// NoCgo is why no provider is available in a binary built without cgo
// (nocgo.go; CgoBuilt is false there).
const NoCgo = "not built: this binary was built without cgo (CGO_ENABLED=0); build it with a C compiler (make build)"

// ProviderInfo describes a provider and whether this build and machine
// can use it.
type ProviderInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Available   bool   `json:"available"`
	Reason      string `json:"reason,omitempty"` // why not, when not available
}

type provider struct {
	ProviderInfo
	open func(Options) (*Device, error) // nil when not available
	// probe, when set, refines Available/Reason at run time (legacy: dlsym).
	probe func() (bool, string)
}

// providers is every provider, described once. The open and probe
// functions are the cgo_*.go files'; in a build without cgo nocgo.go
// leaves them nil, and every provider is unavailable for NoCgo.
var providers = map[string]*provider{
	"null": {ProviderInfo: ProviderInfo{Name: "null",
		Description: "every operation succeeds at once and keeps no state: the harness's own overhead"},
		open: nullOpen},
	"sim": {ProviderInfo: ProviderInfo{Name: "sim",
		Description: "an XRC device emulated in shared memory, with the exact legacy or upstream semantics and an optional cost model"},
		open: simOpen},
	"legacy": {ProviderInfo: ProviderInfo{Name: "legacy",
		Description: "the OFED legacy XRC API (ibv_reg_xrc_rcv_qp), resolved at run time with dlsym"},
		open: legacyOpen, probe: legacyProbe},
	"rdma": {ProviderInfo: ProviderInfo{Name: "rdma",
		Description: "rdma-core's upstream XRC API (ibv_open_xrcd, ibv_create_qp_ex, ibv_open_qp, ibv_destroy_qp)"},
		open: rdmaOpen, probe: rdmaProbe},
}

func init() {
	for _, p := range providers {
		if p.open == nil {
			p.Reason = NoCgo
		}
	}
}

// Providers lists every provider this build knows, sorted by name.
func Providers() []ProviderInfo {
	var out []ProviderInfo
	for _, p := range providers {
		info := p.ProviderInfo
		info.Available = p.open != nil
		if info.Available && p.probe != nil {
			info.Available, info.Reason = p.probe()
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// IsProvider reports whether name is a provider this build knows.
func IsProvider(name string) bool { _, ok := providers[name]; return ok }

func providerNames() string {
	var names []string
	for n := range providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
