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
