package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// JUnit XML: the test report format CI servers (Jenkins, GitLab, GitHub
// test reporters, Azure) read. Only the part of the format every one of
// them accepts is written: testsuites > testsuite > testcase, with failure,
// error or skipped inside a testcase, properties on a suite, and the
// counts and times as attributes. Each failure's message carries the
// numbers, so a CI page that shows only the message still says why.

// JUnitReport is one junit.xml: a set of suites.
type JUnitReport struct {
	Name   string
	Suites []JUnitSuite
}

// JUnitSuite is one testsuite, e.g. "criteria" or "conformance".
type JUnitSuite struct {
	Name       string
	Timestamp  time.Time // when the suite started; zero: not written
	Hostname   string
	Properties []JUnitProperty // e.g. the device and its firmware
	Cases      []JUnitCase
	// Time is the suite's wall time when its cases are not timed one by
	// one (checks run together); the suite's time is the larger of it and
	// its cases' sum.
	Time time.Duration
}

// JUnitProperty is one name=value of a suite.
type JUnitProperty struct {
	Name, Value string
}

// JUnitCase is one testcase. At most one of Failure, Error and Skipped is
// set; none means it passed.
type JUnitCase struct {
	Name      string
	Classname string // CI servers group by it; the suite's name when empty
	Time      time.Duration
	Failure   *JUnitOutcome // the check ran and did not hold
	Error     *JUnitOutcome // the check could not run
	Skipped   *JUnitOutcome // not run, with the reason
	SystemOut string        // evidence: figures, paths
}

// JUnitOutcome is a failure, error or skip: a one-line message, a type,
// and free text (the details).
type JUnitOutcome struct {
	Message string
	Type    string
	Text    string
}

type xmlSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr,omitempty"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Skipped  int        `xml:"skipped,attr"`
	Time     string     `xml:"time,attr"`
	Suites   []xmlSuite `xml:"testsuite"`
}

type xmlSuite struct {
	Name       string         `xml:"name,attr"`
	Tests      int            `xml:"tests,attr"`
	Failures   int            `xml:"failures,attr"`
	Errors     int            `xml:"errors,attr"`
	Skipped    int            `xml:"skipped,attr"`
	Time       string         `xml:"time,attr"`
	Timestamp  string         `xml:"timestamp,attr,omitempty"`
	Hostname   string         `xml:"hostname,attr,omitempty"`
	Properties *xmlProperties `xml:"properties"`
	Cases      []xmlCase      `xml:"testcase"`
}

type xmlProperties struct {
	Props []xmlProperty `xml:"property"`
}

type xmlProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xmlCase struct {
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	Time      string      `xml:"time,attr"`
	Skipped   *xmlOutcome `xml:"skipped"`
	Error     *xmlOutcome `xml:"error"`
	Failure   *xmlOutcome `xml:"failure"`
	SystemOut *xmlText    `xml:"system-out"`
}

type xmlOutcome struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

type xmlText struct {
	Text string `xml:",chardata"`
}

// seconds writes a duration as JUnit's time: seconds with millisecond
// precision, never negative.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f", math.Max(0, d.Seconds()))
}

// WriteJUnit writes r as JUnit XML. The counts are computed from the cases,
// so they cannot disagree with them. Characters XML cannot carry (control
// characters in a message) are replaced by U+FFFD by the encoder.
func WriteJUnit(w io.Writer, r JUnitReport) error {
	out := xmlSuites{Name: r.Name}
	var total time.Duration
	for _, s := range r.Suites {
		xs := xmlSuite{Name: s.Name, Hostname: s.Hostname}
		if !s.Timestamp.IsZero() {
			xs.Timestamp = s.Timestamp.UTC().Format("2006-01-02T15:04:05")
		}
		if len(s.Properties) > 0 {
			xs.Properties = &xmlProperties{}
			for _, p := range s.Properties {
				xs.Properties.Props = append(xs.Properties.Props, xmlProperty(p))
			}
		}
		var st time.Duration
		for _, c := range s.Cases {
			xc := xmlCase{Name: c.Name, Classname: c.Classname, Time: seconds(c.Time)}
			if xc.Classname == "" {
				xc.Classname = s.Name
			}
			set := 0
			for _, o := range []struct {
				in  *JUnitOutcome
				out **xmlOutcome
				n   *int
			}{{c.Failure, &xc.Failure, &xs.Failures}, {c.Error, &xc.Error, &xs.Errors}, {c.Skipped, &xc.Skipped, &xs.Skipped}} {
				if o.in != nil {
					*o.out = &xmlOutcome{Message: o.in.Message, Type: o.in.Type, Text: o.in.Text}
					*o.n++
					set++
				}
			}
			if set > 1 {
				return fmt.Errorf("junit: testcase %s.%s has %d outcomes; at most one of failure, error, skipped", xc.Classname, c.Name, set)
			}
			if c.SystemOut != "" {
				xc.SystemOut = &xmlText{c.SystemOut}
			}
			xs.Cases = append(xs.Cases, xc)
			st += max(c.Time, 0)
		}
		st = max(st, s.Time)
		xs.Tests, xs.Time = len(xs.Cases), seconds(st)
		out.Tests += xs.Tests
		out.Failures += xs.Failures
		out.Errors += xs.Errors
		out.Skipped += xs.Skipped
		total += st
		out.Suites = append(out.Suites, xs)
	}
	out.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// failed reports whether any case of r failed or errored.
func (r JUnitReport) failed() bool {
	for _, s := range r.Suites {
		if slices.ContainsFunc(s.Cases, func(c JUnitCase) bool { return c.Failure != nil || c.Error != nil }) {
			return true
		}
	}
	return false
}
