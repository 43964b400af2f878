package bench

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"

	"github.com/xrcbench/xrcbench/results"
)

// v2Encoder writes a counts array (the layout of results.NewHistogram) in
// the HdrHistogram V2 compressed form, byte for byte what
// results.EncodeHistogram writes for the histogram holding those counts,
// with buffers and a zlib writer it keeps. hdrhistogram-go's encoder
// allocates ~850 KB per histogram (a new zlib writer at best compression),
// so an interval's four histograms made a worker collect garbage at every
// interval's end, and a measured thread back from C during the collector's
// stop-the-world phases waited for them (up to 8 ms on a loaded machine).
//
// The form: base64 of [compressed cookie, length, zlib of [cookie, payload
// length, normalizing index offset 0, significant digits, lowest and
// highest trackable values, conversion ratio 1.0, payload]], the payload
// the counts up to the last non-zero one as ZigZag LEB128 (at most 9
// bytes each), a run of more than one zero as its negated length.
type v2Encoder struct {
	payload, raw, zbuf, out bytes.Buffer
	z                       *zlib.Writer
	b64                     []byte
	digits                  int32
	lowest, highest         int64
}

const (
	v2Cookie           int32 = 0x1c849303 | 0x10 // hdrhistogram-go's V2 encoding cookie
	v2CompressedCookie int32 = 0x1c849304 | 0x10
)

func newV2Encoder() *v2Encoder {
	h := results.NewHistogram()
	e := &v2Encoder{digits: int32(h.SignificantFigures()), lowest: h.LowestTrackableValue(), highest: h.HighestTrackableValue()}
	e.z, _ = zlib.NewWriterLevel(&e.zbuf, zlib.BestCompression) // the level is valid
	return e
}

// encode is counts in the V2 compressed base64 form.
func (e *v2Encoder) encode(counts []int64) (string, error) {
	limit := 1 // an empty histogram still writes its first count
	for i := len(counts) - 1; i > 0; i-- {
		if counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	e.payload.Reset()
	for i := 0; i < limit; {
		c := counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		e.zigZag(c)
	}
	e.raw.Reset()
	var hdr [40]byte
	be := binary.BigEndian
	be.PutUint32(hdr[0:], uint32(v2Cookie))
	be.PutUint32(hdr[4:], uint32(e.payload.Len()))
	be.PutUint32(hdr[8:], 0) // normalizing index offset
	be.PutUint32(hdr[12:], uint32(e.digits))
	be.PutUint64(hdr[16:], uint64(e.lowest))
	be.PutUint64(hdr[24:], uint64(e.highest))
	be.PutUint64(hdr[32:], math.Float64bits(1.0)) // integer to double conversion ratio
	e.raw.Write(hdr[:])
	e.raw.Write(e.payload.Bytes())
	e.zbuf.Reset()
	e.z.Reset(&e.zbuf)
	if _, err := e.z.Write(e.raw.Bytes()); err != nil {
		return "", err
	}
	if err := e.z.Close(); err != nil {
		return "", err
	}
	e.out.Reset()
	be.PutUint32(hdr[0:], uint32(v2CompressedCookie))
	be.PutUint32(hdr[4:], uint32(e.zbuf.Len()))
	e.out.Write(hdr[:8])
	e.out.Write(e.zbuf.Bytes())
	n := base64.StdEncoding.EncodedLen(e.out.Len())
	if cap(e.b64) < n {
		e.b64 = make([]byte, n)
	}
	e.b64 = e.b64[:n]
	base64.StdEncoding.Encode(e.b64, e.out.Bytes())
	return string(e.b64), nil
}

// zigZag appends v as hdrhistogram's ZigZag LEB128-64b9B: 7 bits a byte
// with a continuation bit, the ninth byte whole.
func (e *v2Encoder) zigZag(v int64) {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			e.payload.WriteByte(byte(u))
			return
		}
		e.payload.WriteByte(byte(u&0x7f | 0x80))
		u >>= 7
	}
	e.payload.WriteByte(byte(u))
}
