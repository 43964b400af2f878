package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDeviceArgument: perftest's habits on the embedded providers. -d
// names a device the provider has or is refused before anything is
// written (it was recorded as "device: foo" on sim); -F is perftest's
// "don't check the CPU frequency", --no-cpu-check.
func TestDeviceArgument(t *testing.T) {
	judgesNoTime(t)
	bin := inputBinary(t)
	quick := []string{"--duration", "100ms", "--warmup", "0s", "--repetitions", "1"}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string // in the one line of stderr (exit 2) or result.json (exit 0)
	}{
		{"sim, a device it lacks", []string{"-d", "foo"}, 2, `--device "foo": the sim provider's one device is sim0`},
		{"null, any device", []string{"--provider", "null", "--device", "mlx5_0"}, 2, `--device "mlx5_0": the null provider has no device`},
		{"sim, its device", []string{"-d", "sim0"}, 0, `"device": "sim0"`},
		{"-F", []string{"-F"}, 0, `"cpu_check": "off (--no-cpu-check)"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append(append([]string{"run", "--out", out}, quick...), tt.args...)
			code, stderr := runWithin(t, 2*time.Minute, bin, args...)
			if code != tt.code {
				t.Fatalf("%v: exit %d, want %d; stderr %q", args, code, tt.code, stderr)
			}
			if tt.code == 2 {
				wantOneLine(t, args, stderr, tt.want)
				if _, err := os.Lstat(out); !os.IsNotExist(err) {
					t.Errorf("%v: refused, yet %s exists (%v)", args, out, err)
				}
				return
			}
			b, err := os.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tt.want) {
				t.Errorf("%v: result.json lacks %s", args, tt.want)
			}
		})
	}
}
