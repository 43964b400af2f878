package results

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: any bytes as result.json load or fail with an error naming
// the file; never a panic.
func FuzzLoad(f *testing.F) {
	for _, p := range []string{"../report/testdata/sweeps/engine-lifecycle/p1-t1-q4/result.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
			// A latency below zero, which must not load.
			f.Add(bytes.Replace(b, []byte(`"min": 30`), []byte(`"min": -30`), 1))
		}
	}
	f.Add([]byte(`{"schema":1,"ops":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Load(dir)
		if err == nil && r == nil {
			t.Fatal("Load returned neither a result nor an error")
		}
		if err == nil {
			for kind, s := range r.Ops {
				if s.Count > 0 && (s.NS.Min < 0 || s.NS.Mean < 0) {
					t.Fatalf("loaded %s with a negative latency: %+v", kind, s.NS)
				}
			}
		}
	})
}

// FuzzDecodeHistogram: the encoded histograms of result.json and of the
// worker protocol decode or fail; never a panic.
func FuzzDecodeHistogram(f *testing.F) {
	h := NewHistogram()
	for _, v := range []int64{1, 100, 2500, 1e6} {
		h.RecordValue(v)
	}
	if enc, err := EncodeHistogram(h); err == nil {
		f.Add(enc)
	}
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		if h, err := DecodeHistogram(s); err == nil && h == nil {
			t.Fatal("no histogram and no error")
		}
	})
}

// FuzzReadTimeline: any bytes as a .hlog give a timeline, possibly cut
// short with an error; never a panic.
func FuzzReadTimeline(f *testing.F) {
	// The seeds are an engine's logs, kept with report's fixtures.
	paths, _ := filepath.Glob(filepath.Join("..", "report", "testdata", "sweeps", "engine-lifecycle", "p1-t1-q4", "*.hlog"))
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
		tl, sum, _, err := ReadTimeline(path)
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
