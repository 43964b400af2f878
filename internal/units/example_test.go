package units_test

import (
	"fmt"

	"github.com/xrcbench/xrcbench/internal/units"
)

func ExampleFormatNS() {
	for _, ns := range []float64{0, 950, 1234, 98_765, 4_500_000, 2e9} {
		fmt.Println(units.FormatNS(ns))
	}
	// Output:
	// 0ns
	// 950ns
	// 1.23µs
	// 98.8µs
	// 4.50ms
	// 2.00s
}
