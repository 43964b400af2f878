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

// What the CLI prints reaches a terminal: an escape sequence in a folder
// name, a device name or a file's text is printed as \x1b, never as ESC.
func TestPrintsNoControlCharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run\x1b]0;pwned\a\x1b[2J")
	tests := []struct {
		name string
		args []string
		want string // on stderr
	}{
		{"report of a missing folder", []string{"report", dir}, `run\x1b]0;pwned\x07\x1b[2J`},
		{"compare of missing folders", []string{"compare", dir, dir + "2"}, `\x1b[2J`},
		{"a workload named with 8-bit CSI", []string{"run", "--workload", "nosuch\x9b2J"}, `nosuch\x9b2J`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(tt.args...)
			if code == 0 {
				t.Fatalf("exit 0\n%s\n%s", stdout, stderr)
			}
			if strings.ContainsAny(stdout+stderr, "\x1b\a\u009b") || strings.Contains(stdout+stderr, "\x9b") {
				t.Errorf("a control character is printed: %q %q", stdout, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q lacks %q", stderr, tt.want)
			}
		})
	}
}
