package facts

import (
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// rdma-core installs libibverbs.so.1.<ABI>.<release>, e.g.
// libibverbs.so.1.14.44.0 for rdma-core 44.0.
var rdmaCoreFile = regexp.MustCompile(`libibverbs\.so\.1\.\d+\.(\d+\.\d+)$`)

// TestDoubleMarker is the symbol only the libibverbs test double
// (verbs/fakeverbs) exports: no rdma-core has it, whatever its file is
// called.
const TestDoubleMarker = "xrcbench_fakeverbs_test_double"

// IsTestDouble reports whether the libibverbs loaded from path is the
// test double: its dynamic symbol table, read at run time, holds the
// marker. A file that cannot be read is not called a double.
func IsTestDouble(path string) bool {
	if path == "" {
		return false
	}
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return false
	}
	for _, s := range syms {
		if s.Name == TestDoubleMarker && s.Section != elf.SHN_UNDEF {
			return true
		}
	}
	return false
}

// LibraryVersion names the libibverbs a device was opened through from
// its file: "rdma-core 44.0", the test double, or the file's name.
func LibraryVersion(path string, testDouble bool) string {
	if path == "" {
		return ""
	}
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	if m := rdmaCoreFile.FindStringSubmatch(real); m != nil {
		return "rdma-core " + m[1]
	}
	if testDouble {
		return "xrcbench fakeverbs (test double)"
	}
	return "libibverbs " + filepath.Base(real)
}

// testDoubleCostEnv is the test double's cost model (fakeverbs.c).
const testDoubleCostEnv = "XRCBENCH_FAKEVERBS_COST"

// TestDoubleCost is the cost model the test double runs with: the double
// reads it from its process's environment, as this reads it here ("none"
// unset).
func TestDoubleCost() string {
	if c := strings.TrimSpace(os.Getenv(testDoubleCostEnv)); c != "" {
		return c
	}
	return "none"
}
