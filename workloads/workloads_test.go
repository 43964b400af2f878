package workloads

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBuiltins(t *testing.T) {
	want := map[string][]string{
		"churn":     {OpCreate, OpUnregLast},
		"errors":    {OpRegInvalid, OpRegForeign},
		"gasnet":    {OpCreate, OpReg, OpUnreg, OpUnregLast},
		"ofi-rxm":   {OpCreate, OpReg, OpUnreg, OpUnregLast},
		"lifecycle": {OpCreate, OpReg, OpUnreg, OpUnregLast},
		"sharded":   {OpReg, OpUnreg},
		"steady":    {OpReg, OpUnreg},
		"storm":     {OpCreate, OpReg, OpUnreg, OpUnregLast},
	}
	got := Builtins()
	if len(got) != len(want) {
		t.Fatalf("got %d built-ins, want %d", len(got), len(want))
	}
	for _, s := range got {
		kinds, ok := want[s.Name]
		if !ok {
			t.Errorf("unexpected built-in %q", s.Name)
			continue
		}
		if strings.Join(s.Kinds(), ",") != strings.Join(kinds, ",") {
			t.Errorf("%s: kinds %v, want %v", s.Name, s.Kinds(), kinds)
		}
		if s.Source == "" || s.File != "" || s.Description == "" {
			t.Errorf("%s: source/file/description not set as for a built-in", s.Name)
		}
		if (s.Mode == StormMode) != (s.Storm != nil) {
			t.Errorf("%s: mode %s with storm block %v", s.Name, s.Mode, s.Storm)
		}
		for _, p := range s.Phases {
			if p.Line == 0 {
				t.Errorf("%s: phase %s without a line", s.Name, p.Op)
			}
		}
	}
}

func TestGet(t *testing.T) {
	s, err := Get("lifecycle")
	if err != nil || s.Name != "lifecycle" || s.Mode != Rounds {
		t.Fatalf("Get(lifecycle) = %v, %v", s, err)
	}
	if _, err := Get("nosuch"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "steady") {
		t.Errorf("Get(nosuch) = %v, want ErrUnknown listing the built-ins", err)
	}
	path := filepath.Join(t.TempDir(), "mine.yaml")
	src := strings.Replace(builtinText(t, "steady"), "name: steady", "name: mine", 1)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = Get(path)
	if err != nil || s.Name != "mine" || s.File != path {
		t.Fatalf("Get(%s) = %+v, %v", path, s, err)
	}
	if _, err := Get(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, ErrUnknown) {
		t.Errorf("missing file: %v, want ErrUnknown", err)
	}
}

func builtinText(t *testing.T, name string) string {
	data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const head = "name: x\ndescription: d\n"

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line int
		msg  string
	}{
		{"empty", "", 0, "empty spec"},
		{"unknown key", head + "mode: loop\nqps: {scope: shared, holder: true}\ncolour: red\nphases: [{op: reg, by: each}, {op: unreg, by: each}]\n", 5, "unknown key colour (known here: description, gates, headline, mode, name, phases, qps, storm)"},
		{"unknown nested key", head + "mode: loop\nqps:\n  scope: shared\n  holders: true\nphases: [{op: reg, by: each}]\n", 6, "unknown key holders; did you mean holder?"},
		{"wrong type", head + "mode: loop\nqps: {scope: shared, holder: maybe}\nphases: [{op: reg, by: each}]\n", 4, "cannot unmarshal"},
		{"bad mode", head + "mode: sometimes\nqps: {scope: shared}\nphases: [{op: reg, by: each}]\n", 3, `mode "sometimes"`},
		{"missing name", "description: d\nmode: loop\n", 1, "missing name"},
		{"missing scope", head + "mode: loop\nqps: {holder: true}\nphases: [{op: reg, by: each}]\n", 4, "missing qps.scope"},
		{"no phases", head + "mode: loop\nqps: {scope: shared}\n", 1, "no phases"},
		{"bad op", head + "mode: loop\nqps: {scope: shared}\nphases:\n  - op: regg\n    by: each\n", 6, `op "regg"`},
		{"bad by for mode", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases:\n  - op: reg\n    by: closer\n", 6, `by "closer" in mode loop`},
		{"bad expect", head + "mode: loop\nqps: {scope: shared}\nphases:\n  - op: reg_invalid\n    by: each\n    expect: ENOPE\n", 6, `expect "ENOPE"`},
		{"expect on reg", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases:\n  - {op: reg, by: each, expect: EINVAL}\n", 6, "must expect ok"},
		{"two documents", head + "mode: loop\nqps: {scope: shared}\nphases: [{op: reg_invalid, by: each}]\n---\nname: y\n", 6, "more than one YAML document"},
		{"reg without QPs", head + "mode: loop\nqps: {scope: shared}\nphases:\n  - {op: reg, by: each}\n  - {op: unreg, by: each}\n", 6, "does not exist"},
		{"unreg without reg", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases:\n  - {op: unreg, by: each}\n", 6, "not registered"},
		{"reg twice", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases:\n  - {op: reg, by: each}\n  - {op: reg, by: each}\n  - {op: unreg, by: each}\n", 7, "already registered"},
		{"reg never unreg", head + "mode: loop\nqps: {scope: per_thread, holder: true}\nphases:\n  - {op: reg, by: each}\n", 6, "still hold registrations"},
		{"unreg that destroys", head + "mode: loop\nqps: {scope: per_thread}\nphases:\n  - {op: create, by: each}\n  - {op: unreg, by: each}\n", 7, "make it unreg_last"},
		{"unreg_last that keeps", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases:\n  - {op: reg, by: each}\n  - {op: unreg_last, by: each}\n", 7, "only remaining registration"},
		{"create leaks", head + "mode: loop\nqps: {scope: per_thread}\nphases:\n  - {op: create, by: each}\n", 6, "still hold registrations"},
		{"shared create in loop", head + "mode: loop\nqps: {scope: shared}\nphases:\n  - {op: create, by: each}\n  - {op: unreg_last, by: each}\n", 4, "needs qps.scope per_thread"},
		{"holder with create", head + "mode: loop\nqps: {scope: per_thread, holder: true}\nphases:\n  - {op: create, by: each}\n", 4, "nothing to hold"},
		{"rounds per thread", head + "mode: rounds\nqps: {scope: per_thread}\nphases:\n  - {op: create, by: creator}\n", 4, "needs qps.scope shared"},
		{"rounds create by all", head + "mode: rounds\nqps: {scope: shared}\nphases:\n  - {op: create, by: all}\n  - {op: unreg_last, by: creator}\n", 6, "would create the same QP"},
		{"rounds unreg by all", head + "mode: rounds\nqps: {scope: shared}\nphases:\n  - {op: create, by: creator}\n  - {op: reg, by: all_but_creator}\n  - {op: unreg, by: all}\n", 8, "make it unreg_last"},
		{"rounds last before others", head + "mode: rounds\nqps: {scope: shared}\nphases:\n  - {op: create, by: creator}\n  - {op: reg, by: all_but_creator}\n  - {op: unreg_last, by: closer}\n  - {op: unreg, by: all_but_closer}\n", 8, "only remaining registration"},
		{"rounds reg by all after create", head + "mode: rounds\nqps: {scope: shared}\nphases:\n  - {op: create, by: creator}\n  - {op: reg, by: all}\n", 7, "already registered"},
		{"gate on a kind not measured", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases: [{op: reg, by: each}, {op: unreg, by: each}]\ngates: [reg.p50, unreg_last.p50]\n", 6, `op kind "unreg_last" is not one the workload measures`},
		{"gate on an unknown metric", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases: [{op: reg, by: each}, {op: unreg, by: each}]\ngates:\n  - reg.p50\n  - reg.p42\n", 8, `unknown metric "p42"`},
		{"gate without a metric", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases: [{op: reg, by: each}, {op: unreg, by: each}]\ngates: [reg]\n", 6, "want KIND.METRIC"},
		{"storm gate outside a storm", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases: [{op: reg, by: each}, {op: unreg, by: each}]\ngates: [storm.makespan]\n", 6, "only a storm"},
		{"gate twice", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases: [{op: reg, by: each}, {op: unreg, by: each}]\ngates: [reg.p50, reg.p50]\n", 6, "named twice"},
		{"no gate", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases: [{op: reg, by: each}, {op: unreg, by: each}]\ngates: []\n", 6, "at least one"},
		{"bad headline", head + "mode: loop\nqps: {scope: shared, holder: true}\nphases: [{op: reg, by: each}, {op: unreg, by: each}]\nheadline: unreg.ops\n", 6, "headline: gate \"unreg.ops\""},
		{"storm gate on an op metric", head + "mode: storm\nstorm: {nodes: 3, arrival: burst, teardown: unreg}\ngates: [storm.p50]\n", 5, "a storm's metrics are makespan, teardown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "w.yaml")
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SyntaxError", err)
			}
			if se.Line != tt.line || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("got line %d %q, want line %d containing %q", se.Line, se.Msg, tt.line, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "w.yaml") || strings.Contains(err.Error(), "\n") {
				t.Errorf("message %q: want one line naming the file", err.Error())
			}
		})
	}
}

// Gates and headline: the spec's own, else the p50 of every kind it
// measures (a storm: its makespan), the headline the first gate.
func TestParseGates(t *testing.T) {
	pair := head + "mode: loop\nqps: {scope: shared, holder: true}\nphases: [{op: reg, by: each}, {op: unreg, by: each}]\n"
	for _, tt := range []struct {
		name, src, headline string
		gates               []string
	}{
		{"declared", pair + "gates: [unreg.p99, reg.ops_per_sec]\nheadline: reg.p50\n", "reg.p50", []string{"unreg.p99", "reg.ops_per_sec"}},
		{"left out", pair, "reg.p50", []string{"reg.p50", "unreg.p50"}},
		{"storm left out", head + "mode: storm\nstorm: {nodes: 3, arrival: burst, teardown: unreg}\n", "storm.makespan", []string{"storm.makespan"}},
		{"storm teardown", head + "mode: storm\nstorm: {nodes: 3, arrival: burst, teardown: unreg}\ngates: [storm.teardown, reg.p99]\n", "storm.teardown", []string{"storm.teardown", "reg.p99"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(tt.src), "w.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(s.Gates, ",") != strings.Join(tt.gates, ",") || s.Headline != tt.headline {
				t.Errorf("gates %q headline %q, want %q %q", s.Gates, s.Headline, tt.gates, tt.headline)
			}
		})
	}
	want := map[string]string{"churn": "create.p50,unreg_last.p50", "errors": "reg_invalid.p50,reg_foreign.p50",
		"lifecycle": "reg.p50,unreg_last.p50", "sharded": "reg.p50,unreg.p50", "steady": "reg.p50,unreg.p50", "storm": "storm.makespan,storm.teardown",
		"gasnet": "storm.makespan,storm.teardown", "ofi-rxm": "storm.makespan,storm.teardown"}
	for _, s := range Builtins() {
		if got := strings.Join(s.Gates, ","); got != want[s.Name] {
			t.Errorf("built-in %s gates %s, want %s", s.Name, got, want[s.Name])
		}
	}
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		src  string
	}{
		{"rounds with holder", head + "mode: rounds\nqps: {scope: shared, holder: true}\nphases:\n  - {op: reg, by: all}\n  - {op: unreg, by: all}\n"},
		{"rounds create and destroy", head + "mode: rounds\nqps: {scope: shared}\nphases:\n  - {op: create, by: creator}\n  - {op: unreg_last, by: creator}\n"},
		{"errors with other errno", head + "mode: loop\nqps: {scope: shared}\nphases:\n  - {op: reg_invalid, by: each, expect: ENOENT}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.src), "w.yaml"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRoles(t *testing.T) {
	// Over n consecutive rounds every thread creates and closes QP 0 once,
	// and with two threads or more the closer is never the creator.
	for n := 1; n <= 4; n++ {
		created, closed := map[int]int{}, map[int]int{}
		for r := int64(0); r < int64(n); r++ {
			c, l := Creator(r, 0, n), Closer(r, 0, n)
			created[c]++
			closed[l]++
			if n > 1 && c == l {
				t.Errorf("n=%d round %d: creator == closer", n, r)
			}
		}
		for th := 0; th < n; th++ {
			if created[th] != 1 || closed[th] != 1 {
				t.Errorf("n=%d: thread %d created %d, closed %d, want 1 and 1", n, th, created[th], closed[th])
			}
		}
	}
}

// A workload path that is not a small regular file is refused at once with
// one line: a device would be read forever, a FIFO would block the open, a
// huge file would be sent to every worker.
func TestGetRefusesNonRegularAndHuge(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(huge, bytes.Repeat([]byte("# padding\n"), 110_000), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"/dev/zero", "not a regular file (a character device)"},
		{fifo, "not a regular file (a FIFO)"},
		{dir, "not a regular file (a directory)"},
		{huge, "1.0 MiB, more than the 1 MiB"},
	}
	for _, tt := range tests {
		done := make(chan error, 1)
		go func() { _, err := Get(tt.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Get(%s) = %v, want one line saying %q", tt.path, err, tt.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Get(%s) still blocked after 10s", tt.path)
		}
	}
}

// TestErrnoNames: every errno has its C name, not only a listed few (a
// hand-kept table printed ENODEV as "errno 19"), and names map back.
func TestErrnoNames(t *testing.T) {
	tests := []struct {
		e    syscall.Errno
		name string
	}{
		{syscall.EINVAL, "EINVAL"}, {syscall.ENODEV, "ENODEV"}, {syscall.EOPNOTSUPP, "EOPNOTSUPP"},
		{syscall.ENOTCONN, "ENOTCONN"}, {syscall.EHOSTDOWN, "EHOSTDOWN"}, {syscall.Errno(4000), "errno 4000"},
	}
	for _, tt := range tests {
		if got := ErrnoName(tt.e); got != tt.name {
			t.Errorf("ErrnoName(%d) = %q, want %q", int(tt.e), got, tt.name)
		}
		if e, ok := ErrnoByName(tt.name); ok != (tt.e < 200) || (ok && e != tt.e) {
			t.Errorf("ErrnoByName(%q) = %d, %v", tt.name, int(e), ok)
		}
	}
}
