package leaks

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
)

// Set is a set of 24-bit QP numbers: one bit each, 2 MiB. A thread keeps
// one of every QP number it created, so the leak probe of providers that
// cannot be inspected (rdma, legacy) can try every one of them, however
// long the run: a ring of the last few would let a leak of an early QP
// pass as "no QP leaked". It crosses the worker's pipe as JSON (the pages
// that hold any number).
type Set struct {
	words []uint64
}

const (
	qpnBits      = 24
	qpSetWords   = 1 << qpnBits / 64
	qpPageWords  = 1024 // 8 KiB, 65536 QP numbers: the unit sent over the pipe
	qpSetPageCnt = qpSetWords / qpPageWords
)

// NewSet is an empty Set.
func NewSet() *Set { return &Set{words: make([]uint64, qpSetWords)} }

// Add puts qpn in s.
func (s *Set) Add(qpn uint32) {
	qpn &= 1<<qpnBits - 1
	s.words[qpn/64] |= 1 << (qpn % 64)
}

// Has reports whether qpn is in s; s may be nil.
func (s *Set) Has(qpn uint32) bool {
	if s == nil || qpn >= 1<<qpnBits {
		return false
	}
	return s.words[qpn/64]&(1<<(qpn%64)) != 0
}

// Union adds o to s and returns s; either may be nil.
func (s *Set) Union(o *Set) *Set {
	if o == nil {
		return s
	}
	if s == nil {
		s = NewSet()
	}
	for i, w := range o.words {
		s.words[i] |= w
	}
	return s
}

// Len is the number of QP numbers in s.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// Each calls f with every QP number in s, in increasing order, until f
// returns an error.
func (s *Set) Each(f func(uint32) error) error {
	if s == nil {
		return nil
	}
	for i, w := range s.words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			if err := f(uint32(i*64 + b)); err != nil {
				return err
			}
			w &^= 1 << b
		}
	}
	return nil
}

// The wire form holds the pages that have any bit set (QP numbers are
// allocated mostly in sequence, so a run touches few), as base64 of
// little-endian words, keyed by page index.
type setWire struct {
	Pages map[int]string `json:"pages"`
}

// MarshalJSON is the wire form.
func (s *Set) MarshalJSON() ([]byte, error) {
	wire := setWire{Pages: map[int]string{}}
	buf := make([]byte, qpPageWords*8)
	for p := 0; p < qpSetPageCnt; p++ {
		page := s.words[p*qpPageWords : (p+1)*qpPageWords]
		used := false
		for i, w := range page {
			binary.LittleEndian.PutUint64(buf[i*8:], w)
			used = used || w != 0
		}
		if used {
			wire.Pages[p] = base64.StdEncoding.EncodeToString(buf)
		}
	}
	return json.Marshal(wire)
}

// UnmarshalJSON reads the wire form; a page out of range or of the wrong
// size is an error.
func (s *Set) UnmarshalJSON(data []byte) error {
	var wire setWire
	if err := json.Unmarshal(data, &wire); err != nil {
		return err
	}
	s.words = make([]uint64, qpSetWords)
	for p, enc := range wire.Pages {
		buf, err := base64.StdEncoding.DecodeString(enc)
		if err != nil || p < 0 || p >= qpSetPageCnt || len(buf) != qpPageWords*8 {
			return fmt.Errorf("bad QP set page %d", p)
		}
		for i := range qpPageWords {
			s.words[p*qpPageWords+i] = binary.LittleEndian.Uint64(buf[i*8:])
		}
	}
	return nil
}
