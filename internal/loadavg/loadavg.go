// Package loadavg reads the machine's load average: what calibrate names
// when the machine was too busy to judge, and what a test names when it
// skips for another's load. It imports nothing of the project, so the
// command and the test helpers share the one reading.
package loadavg

import (
	"os"
	"strconv"
	"strings"
)

// path is the file Read reads (a variable for its test).
var path = "/proc/loadavg"

// Read is the machine's 1-minute load average, -1 when unknown.
func Read() float64 {
	b, err := os.ReadFile(path)
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
