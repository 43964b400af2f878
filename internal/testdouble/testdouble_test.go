package testdouble

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestModuleRoot(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// This package's own folder, seen from the root it found.
	if _, err := os.Stat(filepath.Join(root, "internal", "testdouble", "testdouble.go")); err != nil {
		t.Errorf("module root %s does not hold internal/testdouble: %v", root, err)
	}
}

func TestEnv(t *testing.T) {
	tests := []struct {
		name, old, wantLD string
	}{
		{"no LD_LIBRARY_PATH", "", "/lib/double"},
		{"one already set: the double first", "/opt/x", "/lib/double:/opt/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LD_LIBRARY_PATH", tt.old)
			env := Env("/lib/double", "/tmp/state", "xbfake0,xbnoxrc0:noxrc")
			want := []string{"LD_LIBRARY_PATH=" + tt.wantLD, "XRCBENCH_FAKEVERBS_DIR=/tmp/state", "XRCBENCH_FAKEVERBS_DEVICES=xbfake0,xbnoxrc0:noxrc"}
			// Last, so that they win over the same names in os.Environ().
			if got := env[len(env)-len(want):]; !slices.Equal(got, want) {
				t.Errorf("env ends %q, want %q", got, want)
			}
		})
	}
}
