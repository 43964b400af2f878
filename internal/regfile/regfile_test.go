package regfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Everything that is not a small enough regular file is refused, at once
// and in one line; a regular file within the caps reads whole.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "ok")
	os.WriteFile(regular, []byte("line one\nline two\n"), 0o600)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, bytes.Repeat([]byte("x\n"), 600), 0o600)
	longLine := filepath.Join(dir, "long")
	os.WriteFile(longLine, bytes.Repeat([]byte("x"), 300), 0o600)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", link)

	tests := []struct {
		path string
		want string // "" reads
	}{
		{regular, ""},
		{big, "1.2 KiB, more than the 1 KiB"},
		{longLine, "a line longer than 256 bytes"},
		{fifo, "not a regular file (a FIFO)"},
		{link, "not a regular file (a character device)"},
		{dir, "not a regular file (a directory)"},
	}
	for _, tt := range tests {
		done := make(chan error, 1)
		go func() {
			// Whole-file reads and streamed reads apply the same caps.
			_, err := ReadFile(tt.path, 1024)
			if err == nil || tt.path == longLine {
				var r *Reader
				if r, err = OpenReader(tt.path, 1024, 256); err == nil {
					_, err = io.ReadAll(r)
					r.Close()
				}
			}
			done <- err
		}()
		select {
		case err := <-done:
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("%s: %v", tt.path, err)
			case tt.want != "" && (err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), tt.path+": ")):
				t.Errorf("%s: %v, want a refusal naming it: %s", tt.path, err, tt.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still blocked after 10s", tt.path)
		}
	}
}
