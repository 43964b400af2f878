package results

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds used everywhere: 1 ns to 100 s at 3 significant digits.
const (
	HistMinNS  = 1
	HistMaxNS  = 100_000_000_000
	HistDigits = 3
)

// NewHistogram returns an empty latency histogram with the project's bounds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistMinNS, HistMaxNS, HistDigits)
}

// EncodeHistogram writes h in the HdrHistogram V2 compressed base64 form
// (the form of .hlog lines), readable by every HdrHistogram library.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// DecodeHistogram reads what EncodeHistogram wrote.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("bad histogram: %w", err)
	}
	return h, nil
}

// Summarize computes the latency summary of h; its percentiles are
// nearest-rank (see ValueAtPercentile).
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ps := ValuesAtPercentiles(h, 50, 90, 99, 99.9)
	return Latency{
		Min:    h.Min(),
		P50:    ps[0],
		P90:    ps[1],
		P99:    ps[2],
		P999:   ps[3],
		Max:    h.Max(),
		Mean:   h.Mean(),
		Stddev: h.StdDev(),
	}
}
