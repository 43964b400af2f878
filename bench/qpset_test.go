package bench

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/leaks"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// A QP set survives the pipe whole: numbers on several pages, the ends of
// the 24-bit space, in order, once each.
func TestQPSetWire(t *testing.T) {
	a, b := leaks.NewSet(), leaks.NewSet()
	for _, q := range []uint32{0, 1, 63, 64, 65535, 65536} {
		a.Add(q)
	}
	for _, q := range []uint32{64, 1 << 20, 1<<24 - 1} {
		b.Add(q)
	}
	var nilSet *leaks.Set
	u := nilSet.Union(a).Union(b).Union(nil)
	data, err := json.Marshal(&doneMsg{Created: u})
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 4*12*1024 {
		t.Errorf("%d bytes on the wire for 4 used pages", len(data))
	}
	var back doneMsg
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	var got []uint32
	back.Created.Each(func(q uint32) error { got = append(got, q); return nil })
	want := []uint32{0, 1, 63, 64, 65535, 65536, 1 << 20, 1<<24 - 1}
	if !slices.Equal(got, want) || back.Created.Len() != len(want) {
		t.Errorf("set %v (len %d), want %v", got, back.Created.Len(), want)
	}
	if err := json.Unmarshal([]byte(`{"created":{"pages":{"300":"AAAA"}}}`), &back); err == nil {
		t.Error("a page out of range was accepted")
	}
}

// The reg probe tries every QP number the run created, not the last few:
// a leak among the first of many is found, and the detail says how many
// were probed. A run with a failed worker is not called checked. Where the
// process is the registrant (legacy-mlnx), a QP this process still holds
// answers the probe EEXIST: leaked too, and the probe's unreg is its last.
func TestProbeLeaksEveryCreated(t *testing.T) {
	for _, tc := range []struct {
		sem      verbs.Semantics
		complete []bool // a probe each; on legacy-mlnx the first destroys the leaks
	}{
		{verbs.Legacy, []bool{true, false}},
		{verbs.LegacyMlnx, []bool{true}},
	} {
		t.Run(string(tc.sem), func(t *testing.T) { probeLeaksEveryCreated(t, tc.sem, tc.complete) })
	}
}

func probeLeaksEveryCreated(t *testing.T, sem verbs.Semantics, completes []bool) {
	dir := t.TempDir()
	vo := verbs.Options{Provider: "sim", Sim: verbs.SimOptions{Dir: filepath.Join(dir, "sim"), Semantics: sem}}
	spec, err := workloads.Get("steady")
	if err != nil {
		t.Fatal(err)
	}
	h, err := openHolder(vo, filepath.Join(dir, "domain"), filepath.Join(dir, "foreign"), spec, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	// A thread's registrant creates 200 QPs and leaks the first two.
	dev, err := verbs.Open(vo)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	dom, err := dev.OpenDomain(filepath.Join(dir, "domain"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer dom.Close()
	created := leaks.NewSet()
	var leaked []uint32
	for i := 0; i < 200; i++ {
		q, err := dom.CreateRcvQP()
		if err != nil {
			t.Fatal(err)
		}
		created.Add(q)
		if i < 2 {
			leaked = append(leaked, q)
		} else if _, err := dom.Unreg(q); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, q := range leaked {
			dom.Unreg(q)
		}
	}()
	if err := h.release(); err != nil {
		t.Fatal(err)
	}
	for _, complete := range completes {
		lc := leaks.Probe(vo, h.made(), created, complete)
		if !slices.Equal(lc.Leaked, leaked) {
			t.Errorf("complete %v: leaked %v, want %v (%s)", complete, lc.Leaked, leaked, lc.Detail)
		}
		if lc.Checked != complete || !strings.Contains(lc.Detail, "probed 203 QP number(s)") {
			t.Errorf("complete %v: checked %v, detail %q", complete, lc.Checked, lc.Detail)
		}
	}
}
