package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// perftest's short flags: -d/--device, -n/--iterations, -D/--duration, with
// -D's bare number in seconds (perftest's -D 10 is ten seconds); a bare
// number for any other duration flag stays an error.
func TestPerftestFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		device     string
		iterations int64
		duration   time.Duration
		parseErr   string // the flag parser's refusal, "" for none
		checkErr   string // the refusal of the configuration, "" for none
	}{
		{"defaults", nil, "", 0, 10 * time.Second, "", ""},
		{"-d", []string{"-d", "mlx5_0"}, "mlx5_0", 0, 10 * time.Second, "", ""},
		{"-d=", []string{"-d=mlx5_1"}, "mlx5_1", 0, 10 * time.Second, "", ""},
		{"-n", []string{"-n", "1000"}, "", 1000, 10 * time.Second, "", ""},
		{"-D seconds", []string{"-D", "10"}, "", 0, 10 * time.Second, "", ""},
		{"-D fraction", []string{"-D", "2.5"}, "", 0, 2500 * time.Millisecond, "", ""},
		{"-D duration", []string{"-D", "500ms"}, "", 0, 500 * time.Millisecond, "", ""},
		{"--duration seconds", []string{"--duration", "7"}, "", 0, 7 * time.Second, "", ""},
		{"--duration=1m30s", []string{"--duration=1m30s"}, "", 0, 90 * time.Second, "", ""},
		{"combined", []string{"-d", "mlx5_0", "-n", "50"}, "mlx5_0", 50, 10 * time.Second, "", ""},
		{"-D word", []string{"-D", "abc"}, "", 0, 0, `"abc": want a duration such as 10s or 500ms, or a number of seconds`, ""},
		{"-D NaN", []string{"-D", "NaN"}, "", 0, 0, "not a number of seconds", ""},
		{"-D huge", []string{"-D", "1e300"}, "", 0, 0, "not a number of seconds", ""},
		{"-D 0", []string{"-D", "0"}, "", 0, 0, "", "--duration 0s, --iterations 0: want exactly one of them positive"},
		{"-D negative", []string{"-D", "-3"}, "", 0, -3 * time.Second, "", "--duration -3s: want a positive duration"},
		{"-D and -n", []string{"-D", "3", "-n", "5"}, "", 5, 3 * time.Second, "", "give --duration or --iterations, not both"},
		{"-n 0", []string{"-n", "0"}, "", 0, 10 * time.Second, "", "--iterations 0: want a positive number"},
		{"--warmup bare number", []string{"--warmup", "1"}, "", 0, 0, `missing unit in duration "1"`, ""},
		{"--stall-timeout bare number", []string{"--stall-timeout", "5"}, "", 0, 0, `missing unit in duration "5"`, ""},
	}
	for _, sweep := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(map[bool]string{false: "run/", true: "sweep/"}[sweep]+tt.name, func(t *testing.T) {
				var f runFlags
				fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
				fs.SetOutput(io.Discard)
				f.register(fs, sweep)
				err := fs.Parse(tt.args)
				if tt.parseErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.parseErr) {
						t.Fatalf("%v: parse error %v, want one with %q", tt.args, err, tt.parseErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("%v: %v", tt.args, err)
				}
				if f.s.Device != tt.device || f.s.Iterations != tt.iterations || f.s.Duration != tt.duration {
					t.Errorf("%v: device %q, iterations %d, duration %v; want %q, %d, %v",
						tt.args, f.s.Device, f.s.Iterations, f.s.Duration, tt.device, tt.iterations, tt.duration)
				}
				f.s.Device = "" // the sim's is sim0: what is checked here is the measured time
				_, err = f.config(fs, 1, 1, 1, 0)
				if tt.checkErr == "" && err != nil || tt.checkErr != "" && (err == nil || !strings.Contains(err.Error(), tt.checkErr)) {
					t.Errorf("%v: config: %v, want %q", tt.args, err, tt.checkErr)
				}
			})
		}
	}
}

// -d is --device wherever a command has --device, and --help says what a
// bare -D number is.
func TestShortDeviceFlag(t *testing.T) {
	root := newRoot(io.Discard, io.Discard)
	for _, name := range []string{"run", "sweep", "conform", "qualify"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		f := cmd.Flags().Lookup("device")
		if f == nil || f.Shorthand != "d" {
			t.Errorf("%s: --device %+v, want shorthand -d", name, f)
		}
	}
	for _, name := range []string{"run", "sweep"} {
		cmd, _, _ := root.Find([]string{name})
		for flag, short := range map[string]string{"duration": "D", "iterations": "n"} {
			if f := cmd.Flags().Lookup(flag); f == nil || f.Shorthand != short {
				t.Errorf("%s: --%s %+v, want shorthand -%s", name, flag, f, short)
			}
		}
		if u := cmd.Flags().Lookup("duration").Usage; !strings.Contains(u, "a bare number is seconds") {
			t.Errorf("%s --duration's help %q does not say a bare number is seconds", name, u)
		}
	}
}
