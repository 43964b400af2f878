package bench

import (
	"bytes"
	"debug/elf"
	"sync"
)

// SelfExe executes this process's own image, whatever has become of the
// file it was started from: workers are started through it, not by path,
// so a binary replaced during a run (make install, a package upgrade) or
// deleted does not measure, or fail, the later repetitions. A child
// started through it runs its parent's image (the kernel's link to the
// image, inherited across fork).
const SelfExe = "/proc/self/exe"

// BuildID is the Go build ID of this process's image (its ELF note
// .note.go.buildid), "unknown" where it cannot be read. The coordinator
// refuses a worker that says another: a worker started by path from a
// file replaced meanwhile is another build, and would measure it.
var BuildID = sync.OnceValue(func() string {
	if id := readBuildID(SelfExe); id != "" {
		return id
	}
	return "unknown"
})

// readBuildID reads the Go build ID note of the ELF file path: a note
// header (name size, descriptor size, type 4), the name "Go\x00\x00" and
// the ID.
func readBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil || s.Size > 1<<12 {
		return ""
	}
	data, err := s.Data()
	if err != nil || len(data) < 16 {
		return ""
	}
	bo := f.ByteOrder
	namesz, descsz, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
	if namesz != 4 || typ != 4 || !bytes.Equal(data[12:16], []byte("Go\x00\x00")) || uint64(descsz) > uint64(len(data)-16) {
		return ""
	}
	return string(data[16 : 16+descsz])
}
