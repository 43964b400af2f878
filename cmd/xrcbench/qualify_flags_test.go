package main

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/xrcbench/xrcbench/internal/qualify"
	"github.com/xrcbench/xrcbench/verbs"
)

// qualify's flags: each bad value is bad usage (exit 2) naming what is
// wrong; good ones become the qualification's options.
func TestQualifyFlagsOptions(t *testing.T) {
	plan, err := qualify.LoadPlan("")
	if err != nil {
		t.Fatal(err)
	}
	other := "" // a provider built here besides sim, for the sim-only flags
	for _, p := range verbs.Providers() {
		if p.Name != "sim" && p.Available {
			other = p.Name
			break
		}
	}
	good := qualifyFlags{provider: "sim", out: t.TempDir(), simSemantics: "legacy", labels: []string{"fw=1.2"}, gidIndex: -1}
	with := func(change func(*qualifyFlags)) qualifyFlags {
		f := good
		change(&f)
		return f
	}
	for _, tc := range []struct {
		name    string
		flags   qualifyFlags
		changed []string // flags given on the command line
		wantErr string   // "" for accepted
	}{
		{"good", good, nil, ""},
		{"no --out: a new folder", with(func(f *qualifyFlags) { f.out = "" }), nil, ""},
		{"provider", with(func(f *qualifyFlags) { f.provider = "nope" }), nil, `unknown provider "nope"`},
		{"label", with(func(f *qualifyFlags) { f.labels = []string{"novalue"} }), nil, "--label"},
		{"sim semantics", with(func(f *qualifyFlags) { f.simSemantics = "odd" }), nil, "--sim-semantics"},
		{"sim cost", with(func(f *qualifyFlags) { f.simCost = "reg=fast" }), nil, "--sim-cost"},
		{"sim flags on another provider", with(func(f *qualifyFlags) { f.provider = other; f.simCost = "reg=1us" }), []string{"sim-cost"}, "apply to --provider sim only"},
		{"resume without a folder", with(func(f *qualifyFlags) { f.out = ""; f.resume = true }), nil, "--resume needs the --out folder"},
		{"port on the sim", with(func(f *qualifyFlags) { f.ibPort = 1 }), nil, "--ib-port and --gid-index apply to --provider rdma and legacy only"},
		{"gid index out of range", with(func(f *qualifyFlags) { f.gidIndex = 256 }), nil, "--gid-index 256: want a GID table index, 0 to 255"},
		{"negative soak", with(func(f *qualifyFlags) { f.soak = -time.Second }), nil, "--soak"},
		{"overrides", with(func(f *qualifyFlags) { f.duration, f.repetitions, f.warmup = 2*time.Second, 3, 0 }), []string{"duration", "repetitions", "warmup"}, ""},
		{"duration 0", with(func(f *qualifyFlags) { f.duration = 0 }), []string{"duration"}, "--duration 0s"},
		{"repetitions 0", with(func(f *qualifyFlags) { f.repetitions = 0 }), []string{"repetitions"}, "--repetitions 0"},
		{"repetitions too many", with(func(f *qualifyFlags) { f.repetitions = 1001 }), []string{"repetitions"}, "--repetitions 1001"},
		{"negative warm-up", with(func(f *qualifyFlags) { f.warmup = -time.Second }), []string{"warmup"}, "--warmup -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.flags.provider == "" {
				t.Skip("no provider but sim is built here")
			}
			fs := pflag.NewFlagSet("qualify", pflag.ContinueOnError)
			fs.String("sim-cost", "", "")
			fs.String("sim-semantics", "", "")
			for _, name := range []string{"duration", "repetitions", "warmup"} {
				fs.String(name, "", "")
			}
			for _, name := range tc.changed {
				if err := fs.Set(name, "x"); err != nil {
					t.Fatal(err)
				}
			}
			o, err := tc.flags.options(fs, plan, io.Discard)
			if tc.wantErr != "" {
				var ue usageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v (%T), want a usage error containing %q", err, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Provider != "sim" || o.Plan != plan || o.Labels["fw"] != "1.2" || o.Out == "" || o.Engine.WorkerExe == "" {
				t.Errorf("options %+v", o)
			}
			v := o.Overrides
			overridden := v.Repetitions == 3 && v.Duration != nil && v.Duration.D() == 2*time.Second && v.Warmup != nil && v.Warmup.D() == 0
			if none := (v == qualify.Overrides{}); (len(tc.changed) > 0 && !overridden) || (len(tc.changed) == 0 && !none) {
				t.Errorf("overrides %+v with %v given", v, tc.changed)
			}
			if tc.flags.out == "" && !strings.Contains(o.Out, "-qualify-sim") {
				t.Errorf("default folder %q, want runs/<time>-qualify-sim", o.Out)
			}
		})
	}
}
