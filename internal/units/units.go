// Package units formats the figures xrcbench prints (nanoseconds, rates,
// counts of things) the one way every page and line shows them: report's
// tables and plots, analysis's fleet and history pages, qualify's verdicts.
// It is presentation, not the results contract: result.json keeps the raw
// numbers, and these are how a person reads them, so they live here rather
// than in package results, whose exported names are the contract.
package units

import (
	"fmt"
	"math"
)

// FormatNS formats nanoseconds as a duration with 3 significant digits.
func FormatNS(ns float64) string {
	if math.Abs(ns) < 1e3 {
		return fmt.Sprintf("%.0fns", ns)
	}
	return scaled(ns, "ns", "µs", "ms", "s")
}

// FormatRate formats an operations-per-second figure with an SI prefix.
func FormatRate(v float64) string { return scaled(v, "/s", "k/s", "M/s", "G/s") }

// scaled is v with 3 significant digits in the largest of the units, each
// a thousand times the one before, that leaves it at least 1.
func scaled(v float64, unit ...string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	i := 0
	for ; i < len(unit)-1 && math.Abs(v) >= 1e3; i++ {
		v /= 1e3
	}
	return sig3(v) + unit[i]
}

func sig3(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// Plural writes n and noun, with an s unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Round3 keeps 3 decimals: sub-nanosecond digits of a median of integers
// are noise in a dashboard.
func Round3(v float64) float64 { return math.Round(v*1000) / 1000 }
