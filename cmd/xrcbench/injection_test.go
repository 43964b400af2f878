package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file given as a workload or a plan may be any file (--workload
// /etc/shadow, a credentials file by a slip of the shell): the error names
// the line and the key, never a line of the file.
func TestInputFileNotEchoed(t *testing.T) {
	const secret = "s3cretHash"
	files := []struct{ name, src string }{
		{"shadow line", "root:$6$" + secret + ":20228:0:99999:7:::\n"},
		{"second line", "daemon:*:20228:0:99999:7:::\nroot:$6$" + secret + ":20228:0:99999:7:::\n"},
		{"key with spaces", "name: x\nmy " + secret + " pass: 1\n"},
		{"bare scalar", secret + "\n"},
		{"value of the wrong type", "name: x\nmode: [" + secret + "]\n"},
		{"anchor", "name: x\ndescription: *" + secret + "\n"},
	}
	for _, f := range files {
		for _, cmd := range [][]string{{"run", "--provider", "null", "--workload"}, {"qualify", "--provider", "null", "--plan"}} {
			t.Run(cmd[0]+"/"+f.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "secrets")
				if err := os.WriteFile(path, []byte(f.src), 0o600); err != nil {
					t.Fatal(err)
				}
				code, stdout, stderr := runCLI(append(cmd, path, "--out", filepath.Join(t.TempDir(), "o"))...)
				if code != exitUsage {
					t.Fatalf("exit %d, want %d\n%s\n%s", code, exitUsage, stdout, stderr)
				}
				checkOneLine(t, stderr)
				if strings.Contains(stderr+stdout, secret) {
					t.Errorf("the file's content is echoed: %q", stderr)
				}
				if !strings.Contains(stderr, path) {
					t.Errorf("the error does not name the file: %q", stderr)
				}
			})
		}
	}
}
