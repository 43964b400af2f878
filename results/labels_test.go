package results

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestParseLabels(t *testing.T) {
	tests := []struct {
		args    []string
		want    map[string]string
		wantErr string
	}{
		{nil, nil, ""},
		{[]string{"fw=22.31.1014"}, map[string]string{"fw": "22.31.1014"}, ""},
		{[]string{"fw=", "board=a=b c"}, map[string]string{"fw": "", "board": "a=b c"}, ""},
		{[]string{"Fw_1.x-y=ü"}, map[string]string{"Fw_1.x-y": "ü"}, ""},
		{[]string{"fw"}, nil, "want key=value"},
		{[]string{"=x"}, nil, "empty key"},
		{[]string{"_fw=x"}, nil, "want a letter"},
		{[]string{"f w=x"}, nil, "want a letter"},
		{[]string{"fw=a\nb"}, nil, "control character"},
		{[]string{"fw=\xff"}, nil, "not UTF-8"},
		{[]string{"fw=" + strings.Repeat("x", MaxLabelValue+1)}, nil, "longer than"},
		{[]string{strings.Repeat("k", MaxLabelKey+1) + "=x"}, nil, "longer than"},
		{[]string{"fw=1", "fw=2"}, nil, "given twice"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, ","), func(t *testing.T) {
			got, err := ParseLabels(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// A result.json whose labels were edited into something a report could
// not show safely is refused like any other invalid result.
func TestValidateLabelsInResult(t *testing.T) {
	r := &Result{Schema: Schema, Status: StatusOK, Config: Config{Workload: "steady", Provider: "sim", Procs: 1, Threads: 1},
		Ops: map[string]OpStats{OpReg: {Count: 1}}, Labels: map[string]string{"fw": "1"}}
	if err := r.Validate(); err != nil {
		t.Fatalf("valid labels refused: %v", err)
	}
	r.Labels["fw"] = "\x1b]0;owned\x07"
	if err := r.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "control character") {
		t.Fatalf("hostile label: err %v", err)
	}
	if got := LabelString(map[string]string{"b": "2", "a": "1"}); got != "a=1 b=2" {
		t.Errorf("LabelString %q", got)
	}
}
