package loadavg

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRead: the first figure of /proc/loadavg's line, and -1 for a file
// that is missing, empty or holds no number.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	defer func(p string) { path = p }(path)
	for _, tc := range []struct {
		name, text string
		want       float64
	}{
		{"a line", "1.52 0.98 0.41 2/345 6789\n", 1.52},
		{"empty", "", -1},
		{"no number", "x 0.98 0.41\n", -1},
		{"missing", "", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path = filepath.Join(dir, tc.name)
			if tc.name != "missing" {
				if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := Read(); got != tc.want {
				t.Errorf("Read of %q = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
	path = "/proc/loadavg"
	if _, err := os.Stat(path); err == nil && Read() < 0 {
		t.Errorf("Read of %s = %v, want a load average", path, Read())
	}
}
