package units

import (
	"math"
	"testing"
)

// The figures every page prints: a change here changes report.html,
// summary.md, the fleet and history pages and qualify's verdicts at once,
// so each boundary of each prefix is pinned.
func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		f    func(float64) string
		name string
		in   float64
		want string
	}{
		{FormatNS, "ns zero", 0, "0ns"},
		{FormatNS, "ns under a µs", 999, "999ns"},
		{FormatNS, "ns one µs", 1000, "1.00µs"},
		{FormatNS, "ns tens of µs", 12_345, "12.3µs"},
		{FormatNS, "ns hundreds of µs", 123_456, "123µs"},
		{FormatNS, "ns ms", 1.5e6, "1.50ms"},
		{FormatNS, "ns s", 61e9, "61.0s"},
		{FormatNS, "ns negative", -2500, "-2.50µs"},
		{FormatNS, "ns NaN", math.NaN(), "NaN"},
		{FormatNS, "ns +Inf", math.Inf(1), "+Inf"},
		{FormatRate, "rate under k", 12.5, "12.5/s"},
		{FormatRate, "rate k", 2500, "2.50k/s"},
		{FormatRate, "rate M", 3.25e6, "3.25M/s"},
		{FormatRate, "rate G", 4e9, "4.00G/s"},
		{FormatRate, "rate -Inf", math.Inf(-1), "-Inf"},
	} {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("%s: %g gives %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0 runs"}, {1, "1 run"}, {2, "2 runs"}} {
		if got := Plural(tt.n, "run"); got != tt.want {
			t.Errorf("Plural(%d, run) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestRound3(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{
		{1.23449, 1.234}, {1.2345678, 1.235}, {-0.0004, 0}, {1500, 1500},
	} {
		if got := Round3(tt.in); got != tt.want {
			t.Errorf("Round3(%g) = %g, want %g", tt.in, got, tt.want)
		}
	}
}
