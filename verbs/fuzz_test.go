package verbs

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParseCost: a --sim-cost value parses or fails with an error; a
// parsed cost written back with String parses to itself.
func FuzzParseCost(f *testing.F) {
	for _, s := range []string{"", "reg=2us", "reg=2us,unreg=2us,destroy=200us", "create=1ms", "reg=10s", "reg=-1us", "reg=2us,reg=3us", "x=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := ParseCost(spec)
		if err != nil {
			return
		}
		back, err := ParseCost(c.String())
		if err != nil || back != c {
			t.Fatalf("%q parsed to %+v, written %q, read back %+v (%v)", spec, c, c.String(), back, err)
		}
	})
}

// FuzzSimDevice: a sim device file damaged in any way (the fuzzer's bytes
// are edits of a real device: a length to cut it to, then offset/bytes
// pairs written over it) must be refused on attach or fail operations
// with an errno; never a crash, a hang or an access outside the mapping.
// The device is opened with the options it was made with, so a damaged
// cost that passes validation is a mismatch: the unused device is made
// afresh rather than a fuzzed cost paid.
func FuzzSimDevice(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 24, 0, 0, 0, 4, 0, 0, 0, 0})                   // max_qps = 0
	f.Add([]byte{0, 0, 0, 0, 48, 0, 0, 0, 8, 0xff, 0xff, 0, 0, 0, 0, 0, 0}) // reg cost
	f.Add([]byte{0, 0x10, 0, 0})                                            // cut at 4 KiB
	f.Add([]byte{0, 0, 0, 0, 0xf8, 0x22, 0x02, 0, 4, 0xe8, 0x03, 0, 0})     // somewhere in slot 0
	f.Add([]byte{0, 0, 0, 0, 120 + 16, 0, 0, 0, 4, 0x5a, 0x5a, 0x5a, 0x5a}) // device lock kind
	// A lock word the fuzzer scribbles on stays "held": fail fast.
	simLockPatience(50 * time.Millisecond)
	f.Cleanup(func() { simLockPatience(0) })
	f.Fuzz(func(t *testing.T, edits []byte) {
		dir, file := newDamageDevice(t)
		domain := filepath.Join(t.TempDir(), "domain")
		applyEdits(t, file, edits)
		o := damageOpts
		o.Dir = dir
		dev, err := Open(Options{Provider: "sim", Sim: o})
		if err != nil {
			return
		}
		defer dev.Close()
		dom, err := dev.OpenDomain(domain, true)
		if err != nil {
			return
		}
		defer dom.Close()
		for _, q := range []uint32{0x100, 0x101, 0x13f} {
			dom.Reg(q)
			dom.Unreg(q)
		}
		if q, err := dom.CreateRcvQP(); err == nil {
			dom.Reg(q)
			dom.Unreg(q)
			dom.Unreg(q)
		}
		InspectSim(dir)
	})
}

// applyEdits: edits[0:4] is a length (little endian) to cut the file to
// when not zero (modulo its size), then records of offset (4 bytes, modulo
// the size), a length byte and that many bytes to write there.
func applyEdits(t *testing.T, f simFile, edits []byte) {
	if len(edits) >= 4 {
		if cut := int64(binary.LittleEndian.Uint32(edits)); cut != 0 {
			defer func() {
				if err := os.Truncate(f.path, cut%f.size); err != nil {
					t.Fatal(err)
				}
			}()
		}
		edits = edits[4:]
	}
	for len(edits) >= 5 {
		off := int64(binary.LittleEndian.Uint32(edits)) % f.size
		n := int(edits[4])
		edits = edits[5:]
		n = min(n, len(edits))
		f.patch(t, off, edits[:n])
		edits = edits[n:]
	}
}
