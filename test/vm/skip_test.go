package vm

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSkipSaysWhy: where QEMU is missing, make vmtest's script skips on
// one line saying why and exits 0, never silently; VMTEST_REQUIRE=1 makes
// the same skip a failure.
func TestSkipSaysWhy(t *testing.T) {
	tests := []struct {
		name    string
		require string
		code    int
	}{
		{"skip", "", 0},
		{"required", "1", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("./run.sh")
			cmd.Env = append(os.Environ(), "QEMU=/nonexistent/qemu-system-x86_64", "VMTEST_REQUIRE="+tt.require)
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code || !strings.HasPrefix(string(out), "vmtest: SKIP: /nonexistent/qemu-system-x86_64 not installed") {
				t.Errorf("exit %d, want %d; output:\n%s", code, tt.code, out)
			}
		})
	}
}
