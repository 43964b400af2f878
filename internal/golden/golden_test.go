package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Check reports.
type recorder struct {
	testing.TB
	errors, fatals []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) { r.fatals = append(r.fatals, fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	tests := []struct {
		name, file, got string
		update          bool
		wantErr, fatal  string
	}{
		{"missing file", "", "x\n", false, "", "no such file"},
		{"update writes it", "", "v1\n", true, "", ""},
		{"equal passes", "v1\n", "v1\n", false, "", ""},
		{"different fails showing both", "v1\n", "v2\n", false, "--- got\nv2\n\n--- want\nv1\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join("testdata", "golden", "out.txt")
			os.RemoveAll("testdata")
			if tt.file != "" {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			*Update = tt.update
			defer func() { *Update = false }()
			r := &recorder{TB: t}
			Check(r, "out.txt", []byte(tt.got))
			switch {
			case tt.fatal != "":
				if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], tt.fatal) || !strings.Contains(r.fatals[0], "-update") {
					t.Errorf("fatals %q, want one naming %q and -update", r.fatals, tt.fatal)
				}
			case tt.wantErr != "":
				if len(r.errors) != 1 || !strings.Contains(r.errors[0], tt.wantErr) {
					t.Errorf("errors %q, want one containing %q", r.errors, tt.wantErr)
				}
			default:
				if len(r.errors)+len(r.fatals) != 0 {
					t.Errorf("unexpected failure: %q %q", r.errors, r.fatals)
				}
			}
			if tt.update {
				if b, err := os.ReadFile(path); err != nil || string(b) != tt.got {
					t.Errorf("-update left %q (%v), want %q", b, err, tt.got)
				}
			}
		})
	}
}
