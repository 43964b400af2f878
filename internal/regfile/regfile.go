// Package regfile opens and reads the files xrcbench takes as input
// (workload specs, qualification plans, result.json, sweep.json, .hlog
// interval logs; a qualification's files, sysfs attributes) with two
// guarantees: only a regular file is read (a
// FIFO, a device such as /dev/zero or a directory is refused without
// blocking on it), and never more than a stated size, so a hostile or
// mistaken path costs one line, not the machine's memory or a hung
// command.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Caps on what xrcbench reads. Each is far above what xrcbench writes for
// the largest configuration it accepts; see README ("Results").
const (
	MaxWorkload = 1 << 20   // a workload spec: 1 MiB
	MaxPlan     = 1 << 20   // a qualification plan: 1 MiB
	MaxResult   = 256 << 20 // result.json: 256 MiB
	MaxSweep    = 64 << 20  // sweep.json: 64 MiB
	MaxHlog     = 1 << 30   // one <kind>.hlog: 1 GiB
	MaxHlogLine = 16 << 20  // one line of a .hlog: 16 MiB
)

// More caps, for what xrcbench reads besides its own inputs.
const (
	// qualification.json and conformance.json: a few hundred KiB at most.
	MaxQualification = 64 << 20
	MaxConformance   = 16 << 20
	// A sysfs, procfs or debugfs attribute is a page at most (64 KiB on
	// the largest pages); a test double's state file a few hundred KiB.
	MaxAttr  = 1 << 20
	MaxState = 16 << 20
)

// ErrRefused is matched (errors.Is) by every refusal: not a regular file,
// or too big. The refusal's own message names the file and the reason.
var ErrRefused = errors.New("refused")

type refusal struct{ path, why string }

func (e *refusal) Error() string        { return e.path + ": " + e.why }
func (e *refusal) Is(target error) bool { return target == ErrRefused }

func refused(path, format string, args ...any) error {
	return &refusal{path, fmt.Sprintf(format, args...)}
}

// Open opens path for reading if it is a regular file. The open itself is
// non-blocking, so a FIFO with no writer does not hang it; the type is
// checked on the opened file, so a path swapped in between does not get
// past the check. Links are followed: a run folder may be a symlink farm.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, refused(path, "not a regular file (%s)", kind(st.Mode()))
	}
	// Regular files ignore O_NONBLOCK; clearing it keeps reads ordinary.
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads a whole regular file of at most limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, tooBig(path, st.Size(), limit)
	}
	// The size can lie (/proc files say 0) or grow while read: the read
	// itself is bounded too.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, tooBig(path, int64(len(data)), limit)
	}
	return data, nil
}

// Reader is an open regular file read as a stream of at most limit bytes,
// in lines of at most lineLimit bytes: a reader that buffers whole lines
// (as the HdrHistogram log reader does) cannot be driven to hold more.
type Reader struct {
	f         *os.File
	path      string
	limit     int64
	lineLimit int64
	n, line   int64
}

// OpenReader opens path (see Open) for reading as a bounded stream.
func OpenReader(path string, limit, lineLimit int64) (*Reader, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil {
		f.Close()
		return nil, err
	} else if st.Size() > limit {
		f.Close()
		return nil, tooBig(path, st.Size(), limit)
	}
	return &Reader{f: f, path: path, limit: limit, lineLimit: lineLimit}, nil
}

func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	for _, b := range p[:n] {
		r.line++
		if b == '\n' {
			r.line = 0
		}
		if r.line > r.lineLimit {
			return 0, refused(r.path, "a line longer than %s", Size(r.lineLimit))
		}
	}
	r.n += int64(n)
	if r.n > r.limit {
		return 0, tooBig(r.path, r.n, r.limit)
	}
	return n, err
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

func tooBig(path string, size, limit int64) error {
	return refused(path, "%s, more than the %s xrcbench reads from such a file", Size(size), Size(limit))
}

// Size formats a byte count: 1 MiB, 300 KiB, 12 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		if n%(1<<20) == 0 {
			return fmt.Sprintf("%d MiB", n>>20)
		}
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		if n%(1<<10) == 0 {
			return fmt.Sprintf("%d KiB", n>>10)
		}
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}
