package verbs

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoubleCostParsesAsSimCost: XRCBENCH_FAKEVERBS_COST (parsed in C by
// the double) takes the strings --sim-cost takes (ParseCost), for the same
// nanoseconds, and refuses those it refuses. Before, the double refused
// decimal durations such as 5.6us and every unit but ns, us and ms.
func TestDoubleCostParsesAsSimCost(t *testing.T) {
	doubleLibDir(t)
	for _, spec := range []string{
		"reg=5.6us", "reg=2.4us", "reg=2us", "reg=1.5ms", "reg=0.5s", "reg=.5us", "reg=5.us",
		"reg=1ms500us", "reg=1µs", "reg=1μs", "reg=0", "reg=-0", "reg=+3us", "reg=0.1m", "reg=0.001h",
		"reg=10s", "reg=1.0000000001us", "reg=2.33333333333333333333333333333us", "reg=7.9999999999ns",
		" reg=3us , unreg=2.5us ", "unreg=1us", "",
		// refused by both
		"reg=10.000000001s", "reg=11s", "reg=1m", "reg=-1us", "reg=5", "reg=5 us", "reg=us", "reg=.us",
		"reg=1us,reg=2us", "reg=1us,", "reg=1us,,unreg=1us", "bogus=1us", "reg", "reg=1xs", "reg=99999999999999999999999ns",
	} {
		t.Run(spec, func(t *testing.T) {
			want, werr := ParseCost(spec)
			state := filepath.Join(t.TempDir(), "state")
			r, e := openInDouble(t, state, "", "XRCBENCH_FAKEVERBS_COST="+spec)
			if werr != nil {
				if !strings.HasPrefix(r, "open error: EINVAL") || !strings.Contains(e, "XRCBENCH_FAKEVERBS_COST") {
					t.Errorf("--sim-cost refuses it (%v); the double: %q\n%s", werr, r, e)
				}
				return
			}
			if r != "open ok" {
				t.Fatalf("--sim-cost takes it (reg %v); the double: %q\n%s", want.Reg, r, e)
			}
			b, err := os.ReadFile(filepath.Join(state, "xbfake0", "sim.dev"))
			if err != nil || len(b) < offCostReg+8 {
				t.Fatalf("reading the device: %v", err)
			}
			if got := binary.LittleEndian.Uint64(b[offCostReg:]); got != uint64(want.Reg) {
				t.Errorf("reg cost in the double %dns, --sim-cost's %dns", got, want.Reg.Nanoseconds())
			}
		})
	}
}
