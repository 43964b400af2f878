package results

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/internal/regfile"
)

// Interval is one interval of a <kind>.hlog.
type Interval struct {
	Tag    string
	Start  float64 // seconds since the first interval of the log
	Length float64 // seconds
	Count  int64
	// Lines is how many lines of the log the interval came from: more
	// than one when a lagging thread's report was written late.
	Lines int64
	P50   int64
	P99   int64
	Max   int64
	// Span is the width (seconds) of the time grid a long log was summed
	// into, to keep at most TimelinePoints points: 0 while every point is
	// one interval.
	Span float64
}

// ErrNotHlog is a file that is no HdrHistogram interval log at all.
var ErrNotHlog = errors.New("not an HdrHistogram interval log")

// hlogLines passes an interval log through line by line, refusing a line
// that is none of an interval log's (a comment, the legend, an interval),
// and noting the run id line.
type hlogLines struct {
	rd    *bufio.Reader
	path  string
	n     int
	runID string
	rest  []byte
	err   error // the first error, as the line reader says it
}

// intervalLine is an interval: [Tag=...,]start,length,max,payload.
var intervalLine = regexp.MustCompile(`^(Tag=[^,]*,)?[0-9.]+,[0-9.]+,[0-9.]+,[A-Za-z0-9+/=]+\r?\n?$`)

func (h *hlogLines) Read(p []byte) (int, error) {
	for len(h.rest) == 0 {
		line, err := h.rd.ReadBytes('\n')
		if len(line) > 0 {
			h.n++
			switch {
			case bytes.HasPrefix(line, []byte(HlogRunIDPrefix)):
				h.runID = strings.TrimSpace(string(line[len(HlogRunIDPrefix):]))
			case line[0] == '#', bytes.HasPrefix(line, []byte(`"StartTimestamp"`)), len(bytes.TrimSpace(line)) == 0:
			case !intervalLine.Match(line):
				h.err = fmt.Errorf("%s: %w: line %d is none of its lines (comment, legend, interval)", h.path, ErrNotHlog, h.n)
				return 0, h.err
			}
			h.rest = line
		}
		if err != nil {
			if len(h.rest) > 0 {
				break
			}
			if err != io.EOF && h.err == nil {
				h.err = err
			}
			return 0, err
		}
	}
	n := copy(p, h.rest)
	h.rest = h.rest[n:]
	return n, nil
}

// ReadTimeline reads an HdrHistogram interval log: its intervals, their
// sum and the run id it names. On a damaged interval it returns what came
// before it and an error naming the file and the interval; a file that is
// no interval log at all (ErrNotHlog), or not one xrcbench reads
// (regfile.ErrRefused: a FIFO, a device, too big), is an error of its own.
func ReadTimeline(path string) ([]Interval, *hdrhistogram.Histogram, string, error) {
	f, err := regfile.OpenReader(path, regfile.MaxHlog, regfile.MaxHlogLine)
	if err != nil {
		return nil, nil, "", err
	}
	defer f.Close()
	lines := &hlogLines{rd: bufio.NewReader(f), path: path}
	tl, sum, err := readIntervals(path, lines)
	if lines.err != nil && (errors.Is(lines.err, ErrNotHlog) || errors.Is(lines.err, regfile.ErrRefused)) {
		return nil, nil, "", lines.err
	}
	return tl, sum, lines.runID, err
}
