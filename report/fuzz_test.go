package report

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadTimeline: any bytes as a .hlog give a timeline, possibly cut
// short with an error; never a panic.
func FuzzReadTimeline(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "sweeps", "engine-lifecycle", "p1-t1-q4", "*.hlog"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "reg.hlog")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		tl, sum, _, err := readTimeline(path)
		if err == nil && sum == nil {
			t.Fatal("no sum and no error")
		}
		for _, iv := range tl {
			if iv.Count < 0 {
				t.Fatalf("interval with %d values", iv.Count)
			}
		}
	})
}
