package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

// FuzzExportCSV: whatever text a run carries (labels, host, device, a
// provider option), the CSV parses back with encoding/csv, every row as
// wide as the header, each cell its text or its text after a ', and no
// cell starts as a formula unless it is a plain number.
func FuzzExportCSV(f *testing.F) {
	for _, s := range []string{"22.31", "=1+1", "-1", "-1+1", "@x", "\t=x", "\r=x", "a,b\n\"c\"", "+", ""} {
		f.Add(s, s, s)
	}
	run, err := LoadRun("testdata/runs/engine-lifecycle")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, label, host, device string) {
		r := *run.Result
		r.Labels = map[string]string{"fw": label}
		r.Environment.Host = host
		r.Config.Device = device
		r.Config.ProviderOpts = map[string]string{"o": label}
		data, err := ExportCSV([]*Run{{Dir: run.Dir, Result: &r, Kinds: run.Kinds}})
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatalf("the CSV does not parse back: %v", err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, rec := range recs[1:] {
			if len(rec) != len(recs[0]) {
				t.Fatalf("row of %d cells, header of %d", len(rec), len(recs[0]))
			}
			for i, c := range rec {
				if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && !decimalRE.MatchString(c) {
					t.Fatalf("cell %s %q starts as a formula", recs[0][i], c)
				}
			}
			// The device column names the device measured when none was
			// asked for; option values write a micro sign as u.
			dev := device
			if dev == "" {
				dev = r.Environment.Device.Name
			}
			for name, in := range map[string]string{"label:fw": label, "host": host, "device": dev, "option:o": asciiSI(label)} {
				// encoding/csv reads a quoted \r\n back as \n.
				in = strings.ReplaceAll(in, "\r\n", "\n")
				if got := rec[col[name]]; got != in && got != "'"+in {
					t.Fatalf("%s %q, written as %q", name, in, got)
				}
			}
		}
	})
}
