package main

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// secondsDuration is a duration flag that also takes a bare number as
// seconds, as perftest's -D does (-D 10 is ten seconds); 1.5 is 1.5s.
// Anything else is a Go duration (10s, 500ms, 1m30s).
type secondsDuration struct{ d *time.Duration }

func newSecondsDuration(def time.Duration, d *time.Duration) secondsDuration {
	*d = def
	return secondsDuration{d}
}

func (v secondsDuration) Set(s string) error {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(secs) || math.IsInf(secs, 0) || math.Abs(secs) > math.MaxInt64/float64(time.Second) {
			return fmt.Errorf("%q: not a number of seconds", s)
		}
		*v.d = time.Duration(secs * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q: want a duration such as 10s or 500ms, or a number of seconds", s)
	}
	*v.d = d
	return nil
}

func (v secondsDuration) String() string { return v.d.String() }
func (v secondsDuration) Type() string   { return "duration" }
