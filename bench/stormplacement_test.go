package bench

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/host"
)

// A storm's ranks are bound each to a CPU of its own by default when they
// fit, and the result says so; --pin=none leaves them to the scheduler,
// and ranks that outnumber the CPUs stay unbound, with the warning.
func TestStormPlacement(t *testing.T) {
	allowed := host.AllowedCPUs()
	for _, tt := range []struct {
		name  string
		pin   host.Placement
		ranks int
		bound bool
	}{
		{"default", "", min(2, len(allowed)), true},
		{"auto", host.PinAuto, len(allowed), true},
		{"none", host.PinNone, min(2, len(allowed)), false},
		{"outnumbered", host.PinAuto, len(allowed) + 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := stormConfig(t, "  nodes: 3\n  arrival: burst\n  teardown: unreg\n", tt.ranks, "")
			cfg.Pin = tt.pin
			cfg.StormDefaults()
			res := runOK(t, cfg)
			seen := map[int]bool{}
			for _, w := range res.Workers {
				for _, c := range w.CPUs {
					if seen[c] || !slices.Contains(allowed, c) {
						t.Errorf("rank on CPU %d: shared, or not allowed (%v)", c, allowed)
					}
					seen[c] = true
				}
			}
			if want := string(cfg.placement()); res.Config.Placement != want {
				t.Errorf("placement %q recorded, want %q", res.Config.Placement, want)
			}
			if tt.bound != res.Config.Pin || tt.bound != (len(seen) == tt.ranks) {
				t.Errorf("pin %v, %d of %d ranks bound (%v), want bound %v", res.Config.Pin, len(seen), tt.ranks, seen, tt.bound)
			}
			warned := false
			for _, w := range res.Warnings {
				warned = warned || strings.Contains(w.Text, "threads share CPUs")
			}
			if warned != (tt.ranks > runtime.NumCPU()) {
				t.Errorf("warnings %q: want the CPUs' sharing named only when ranks outnumber them", res.Warnings)
			}
		})
	}
}
