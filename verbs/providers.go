package verbs

import (
	"sort"
	"strings"
)

// RDMANotBuilt is why the rdma provider is unavailable in a binary built
// without it: a binary built without cgo (every cgo build has it, and loads
// libibverbs at run time).
const RDMANotBuilt = NoCgo

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

// providers is every provider this build knows. Each has two definitions,
// as the standard library has per-platform ones: the cgo_*.go files', and
// nocgo.go's (no open function) in a build without cgo.
var providers = map[string]*provider{
	nullProvider.Name:   nullProvider,
	simProvider.Name:    simProvider,
	legacyProvider.Name: legacyProvider,
	rdmaProvider.Name:   rdmaProvider,
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
