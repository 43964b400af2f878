package host

import (
	"os"
	"strconv"
	"strings"
)

// LoadAverage is the machine's 1-minute load average, -1 when unknown:
// what calibrate names when the machine was too busy to judge, and what a
// timing test names when it skips.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}
