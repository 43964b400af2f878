// Package hdrv2 writes and reads HdrHistogram's V2 compressed form (what
// hdrhistogram-go's Encode writes and its Decode reads) for the counts
// arrays of one layout, allocation-free once warm: the workers' flushers
// encode every interval with it and the coordinator decodes them.
package hdrv2

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Layout is the histograms' shape, as hdrhistogram-go's New takes it, and
// the length of their counts arrays.
type Layout struct {
	Digits          int32
	Lowest, Highest int64
	Counts          int
}

// Encoder writes a counts array of its Layout in the HdrHistogram V2
// compressed form, byte for byte what hdrhistogram-go's Encode writes for
// the histogram holding those counts, with buffers and a zlib writer it
// keeps. hdrhistogram-go's encoder
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
type Encoder struct {
	payload, raw, zbuf, out bytes.Buffer
	z                       *zlib.Writer
	b64                     []byte
	l                       Layout
}

const (
	v2Cookie           int32 = 0x1c849303 | 0x10 // hdrhistogram-go's V2 encoding cookie
	v2CompressedCookie int32 = 0x1c849304 | 0x10
)

// NewEncoder is an encoder of counts arrays of layout l.
func NewEncoder(l Layout) *Encoder {
	e := &Encoder{l: l}
	e.z, _ = zlib.NewWriterLevel(&e.zbuf, zlib.BestCompression) // the level is valid
	return e
}

// Encode is counts in the V2 compressed base64 form.
func (e *Encoder) Encode(counts []int64) (string, error) {
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
	be.PutUint32(hdr[12:], uint32(e.l.Digits))
	be.PutUint64(hdr[16:], uint64(e.l.Lowest))
	be.PutUint64(hdr[24:], uint64(e.l.Highest))
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
func (e *Encoder) zigZag(v int64) {
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

// Decoder reads a V2 compressed histogram of its Layout (what Encoder and
// hdrhistogram-go write) as the (index, count) pairs of its non-zero
// counts, with buffers and a zlib reader it keeps.
// hdrhistogram-go's decoder allocates a histogram (~230 KB) and a zlib
// reader per call, and the coordinator decodes every thread's every
// interval: with the encoder's zlib writers that was ~4 MB of garbage an
// interval and 16-37 ms of CPU a second beside a single measured thread,
// in bursts that took its CPU from it.
type Decoder struct {
	b64, raw []byte
	src      bytes.Reader
	zr       io.ReadCloser
	inflated bytes.Buffer
	pairs    []IndexCount
	l        Layout
}

// IndexCount is a count at an index of a counts array.
type IndexCount struct {
	Index int
	N     int64
}

// NewDecoder is a decoder of histograms of layout l.
func NewDecoder(l Layout) *Decoder { return &Decoder{l: l} }

// MaxInflated bounds what one histogram of l inflates to: its header and
// the longest payload of its counts (a corrupt or hostile stream cannot
// make a decoder hold more).
func (l Layout) MaxInflated() int { return 40 + 9*l.Counts }

// Decode returns the non-zero counts of the histogram s, in index order;
// the slice is the decoder's until its next call.
func (d *Decoder) Decode(s string) ([]IndexCount, error) {
	bad := func(why string, args ...any) ([]IndexCount, error) {
		return nil, fmt.Errorf("bad histogram: "+why, args...)
	}
	if n := base64.StdEncoding.DecodedLen(len(s)); cap(d.b64) < n {
		d.b64 = make([]byte, n)
	}
	d.raw = append(d.raw[:0], s...)
	n, err := base64.StdEncoding.Decode(d.b64[:cap(d.b64)], d.raw)
	if err != nil {
		return bad("%v", err)
	}
	b := d.b64[:n]
	be := binary.BigEndian
	if len(b) < 8 || int32(be.Uint32(b)) != v2CompressedCookie {
		return bad("not a V2 compressed histogram")
	}
	if l := be.Uint32(b[4:]); uint64(l) > uint64(len(b)-8) {
		return bad("compressed length %d past the %d bytes there", l, len(b)-8)
	}
	d.src.Reset(b[8 : 8+be.Uint32(b[4:])])
	if d.zr == nil {
		if d.zr, err = zlib.NewReader(&d.src); err != nil {
			d.zr = nil
			return bad("%v", err)
		}
	} else if err := d.zr.(zlib.Resetter).Reset(&d.src, nil); err != nil {
		return bad("%v", err)
	}
	d.inflated.Reset()
	max := d.l.MaxInflated()
	if _, err := d.inflated.ReadFrom(io.LimitReader(d.zr, int64(max)+1)); err != nil {
		return bad("%v", err)
	}
	p := d.inflated.Bytes()
	if len(p) > max {
		return bad("inflates past %d bytes", max)
	}
	if len(p) < 40 || int32(be.Uint32(p)) != v2Cookie {
		return bad("no V2 header")
	}
	plen := be.Uint32(p[4:])
	switch {
	case uint64(plen) > uint64(len(p)-40):
		return bad("payload length %d past the %d bytes there", plen, len(p)-40)
	case be.Uint32(p[8:]) != 0:
		return bad("normalizing index offset %d", int32(be.Uint32(p[8:])))
	case int32(be.Uint32(p[12:])) != d.l.Digits || int64(be.Uint64(p[16:])) != d.l.Lowest || int64(be.Uint64(p[24:])) != d.l.Highest:
		return bad("%d digits from %d to %d, want the layout of %d from %d to %d", int32(be.Uint32(p[12:])),
			int64(be.Uint64(p[16:])), int64(be.Uint64(p[24:])), d.l.Digits, d.l.Lowest, d.l.Highest)
	}
	d.pairs = d.pairs[:0]
	pay := p[40 : 40+plen]
	for idx := 0; len(pay) > 0; {
		v, used := zigZagValue(pay)
		if used == 0 {
			return bad("a count cut short")
		}
		pay = pay[used:]
		switch {
		case v < 0:
			if -v > int64(d.l.Counts-idx) {
				return bad("a run of %d zeros past the %d counts", -v, d.l.Counts)
			}
			idx += int(-v)
		case idx >= d.l.Counts:
			return bad("more than %d counts", d.l.Counts)
		case v > 0:
			d.pairs = append(d.pairs, IndexCount{idx, v})
			idx++
		default:
			idx++
		}
	}
	return d.pairs, nil
}

// zigZagValue reads one ZigZag LEB128-64b9B value from the front of b and
// the bytes it took (0: b ends inside it).
func zigZagValue(b []byte) (int64, int) {
	var u uint64
	for i := 0; i < 9; i++ {
		if i == len(b) {
			return 0, 0
		}
		if i == 8 {
			u |= uint64(b[i]) << 56
			return int64(u>>1) ^ -int64(u&1), 9
		}
		u |= uint64(b[i]&0x7f) << (7 * uint(i))
		if b[i]&0x80 == 0 {
			return int64(u>>1) ^ -int64(u&1), i + 1
		}
	}
	return 0, 0 // not reached
}
