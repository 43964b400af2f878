package workloads

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// partsDoc is a specDoc whose keys all sit on line 1, as a spec on one
// line would have them: the parts' messages name it and the file.
func partsDoc(t *testing.T) specDoc {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte("{name: x, mode: loop, qps: {scope: shared, holder: true}}"), &root); err != nil {
		t.Fatal(err)
	}
	return specDoc{file: "w.yaml", root: root.Content[0]}
}

// wantSyntaxError checks err against want: "" is no error, else a
// *SyntaxError of the doc's file whose message contains want.
func wantSyntaxError(t *testing.T, err error, want string) {
	t.Helper()
	var se *SyntaxError
	switch {
	case want == "" && err != nil:
		t.Errorf("err = %v, want none", err)
	case want != "" && !errors.As(err, &se):
		t.Errorf("err = %v, want a *SyntaxError containing %q", err, want)
	case want != "" && (se.File != "w.yaml" || !strings.Contains(se.Msg, want)):
		t.Errorf("err = %v, want one of w.yaml containing %q", err, want)
	}
}

func TestCheckNameAndDescription(t *testing.T) {
	tests := []struct {
		name, description string
		want              string
	}{
		{"steady", "d", ""},
		{"with-dash_and.dot", "d", ""},
		{"", "d", "missing name"},
		{"two words", "d", "no spaces or slashes"},
		{"a/b", "d", "no spaces or slashes"},
		{"tab\there", "d", "no spaces or slashes"},
		{"steady", "", "missing description"},
	}
	for _, tt := range tests {
		s := &Spec{Name: tt.name, Description: tt.description}
		err := partsDoc(t).checkNameAndDescription(s)
		wantSyntaxError(t, err, tt.want)
	}
}

// TestCheckPhase: each op's outcome is filled in when left out, only the
// error phases may expect an errno, and by depends on the mode.
func TestCheckPhase(t *testing.T) {
	tests := []struct {
		mode       Mode
		op, by     string
		expect     string
		wantExpect string // after the check, when it passes
		wantErr    string
	}{
		{Loop, OpReg, ByEach, "", "ok", ""},
		{Loop, OpCreate, ByEach, "ok", "ok", ""},
		{Loop, OpRegInvalid, ByEach, "", "EINVAL", ""},
		{Loop, OpRegForeign, ByEach, "", "EINVAL", ""},
		{Loop, OpRegInvalid, ByEach, "ENOENT", "ENOENT", ""},
		{Loop, OpRegForeign, ByEach, "ok", "ok", ""},
		{Rounds, OpUnregLast, ByCloser, "", "ok", ""},
		{Rounds, OpReg, ByAllButCreat, "", "ok", ""},
		{Loop, "regg", ByEach, "", "", `phase 3: op "regg"`},
		{Loop, OpReg, ByAll, "", "", `by "all" in mode loop`},
		{Rounds, OpReg, ByEach, "", "", `by "each" in mode rounds`},
		{Loop, OpUnreg, ByEach, "EINVAL", "", "unreg must expect ok"},
		{Loop, OpRegInvalid, ByEach, "ENOPE", "", `expect "ENOPE"`},
	}
	for _, tt := range tests {
		p := Phase{Op: tt.op, By: tt.by, Expect: tt.expect, Line: 7}
		err := partsDoc(t).checkPhase(tt.mode, 2, &p)
		wantSyntaxError(t, err, tt.wantErr)
		var se *SyntaxError
		if errors.As(err, &se) && se.Line != 7 {
			t.Errorf("%s %s by %s: error on line %d, want the phase's 7", tt.mode, tt.op, tt.by, se.Line)
		}
		if err == nil && p.Expect != tt.wantExpect {
			t.Errorf("%s %s expect %q: became %q, want %q", tt.mode, tt.op, tt.expect, p.Expect, tt.wantExpect)
		}
	}
}

// TestCheckQPsFitPhases: who owns a QP decides which qps blocks a mode
// and a create phase allow.
func TestCheckQPsFitPhases(t *testing.T) {
	create := []Phase{{Op: OpCreate}, {Op: OpUnregLast}}
	reg := []Phase{{Op: OpReg}, {Op: OpUnreg}}
	tests := []struct {
		mode   Mode
		scope  Scope
		holder bool
		phases []Phase
		want   string
	}{
		{Loop, PerThread, false, create, ""},
		{Loop, Shared, true, reg, ""},
		{Loop, PerThread, true, reg, ""},
		{Rounds, Shared, false, create, ""},
		{Rounds, Shared, true, reg, ""},
		{Rounds, PerThread, false, create, "mode rounds needs qps.scope shared"},
		{Loop, PerThread, true, create, "nothing to hold"},
		{Rounds, Shared, true, create, "nothing to hold"},
		{Loop, Shared, false, create, "needs qps.scope per_thread"},
	}
	for _, tt := range tests {
		s := &Spec{Mode: tt.mode, QPs: QPSpec{Scope: tt.scope, Holder: tt.holder}, Phases: tt.phases}
		err := partsDoc(t).checkQPsFitPhases(s)
		wantSyntaxError(t, err, tt.want)
	}
}
