package workloads

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any bytes given as a workload file parse or fail with an
// error; never a panic, a hang or a spec that breaks its own accessors.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("builtin", "*.yaml"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "fuzz.yaml")
		if err != nil {
			if s != nil {
				t.Fatalf("Parse returned a spec and an error: %v", err)
			}
			return
		}
		s.Kinds()
		s.Creates()
		for _, op := range []string{"create", "reg", "unreg"} {
			s.Uses(op)
		}
	})
}
