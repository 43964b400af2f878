package bench

import (
	"bytes"
	"testing"
)

// FuzzFrameReader: any byte stream from a worker decodes into messages
// until an error or its end; never a panic, and never a frame bigger than
// the protocol allows read into memory.
func FuzzFrameReader(f *testing.F) {
	var stream bytes.Buffer
	w := newFrameWriter(&stream)
	for _, m := range []*message{
		{Type: msgReady},
		{Type: msgStart, Start: &startMsg{Deadline: 12345}},
	} {
		if err := w.write(m); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(stream.Bytes())
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newFrameReader(bytes.NewReader(data))
		for i := 0; i < 1000; i++ {
			m, err := r.read()
			if err != nil {
				return
			}
			if m == nil {
				t.Fatal("no message and no error")
			}
		}
	})
}

// FuzzV2Decoder: whatever a worker's pipe carries, the coordinator's
// decoder returns an error or counts inside the array, in index order,
// and what it returns encodes back to a histogram it reads the same.
func FuzzV2Decoder(f *testing.F) {
	e := newV2Encoder()
	counts := make([]int64, histCounts)
	for _, v := range []uint64{1, 900, 10_000, 10_001, 1 << 40, 1 << 62} {
		counts[bucketIndex(v, histCounts)] += int64(v%7 + 1)
		s, _ := e.encode(counts)
		f.Add(s)
	}
	f.Add("")
	d := newV2Decoder()
	f.Fuzz(func(t *testing.T, s string) {
		pairs, err := d.decode(s)
		if err != nil {
			return
		}
		got := make([]int64, histCounts)
		last := -1
		for _, p := range pairs {
			if p.idx <= last || p.idx >= histCounts || p.n <= 0 {
				t.Fatalf("pair %+v after index %d", p, last)
			}
			got[p.idx], last = p.n, p.idx
		}
		again, err := e.encode(got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := d.decode(again)
		if err != nil {
			t.Fatalf("re-encoded: %v", err)
		}
		if len(back) != len(pairs) {
			t.Fatalf("%d counts, %d after encoding them again", len(pairs), len(back))
		}
	})
}
