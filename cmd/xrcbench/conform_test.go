package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestConformCLI(t *testing.T) {
	judgesNoTime(t)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		statuses string // the status of S1..S15 in order, one letter each: P, F, S, T (self-test)
		stderr   string
	}{
		{"sim legacy", []string{"conform"}, 0, "PPPPPPPPPPTPPPP", ""},
		{"sim upstream", []string{"conform", "--sim-semantics", "upstream"}, 0, "PPPPPPPSPPTPPPP", ""},
		{"null keeps no state: nothing checked", []string{"conform", "--provider", "null"}, 1, "SSSSSSSSSSSSSSS", ""},
		{"unknown provider", []string{"conform", "--provider", "bogus"}, 2, "", `unknown provider "bogus"`},
		{"unknown semantics", []string{"conform", "--sim-semantics", "new"}, 2, "", `unknown semantics "new"`},
		{"semantics on another provider", []string{"conform", "--provider", "null", "--sim-semantics", "upstream"}, 2, "", "--provider sim only"},
		{"stray argument", []string{"conform", "S1"}, 2, "", "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			if tc.stderr != "" {
				if !strings.Contains(errOut, tc.stderr) || strings.Count(errOut, "\n") != 1 {
					t.Errorf("stderr %q: want one line containing %q", errOut, tc.stderr)
				}
				return
			}
			var got strings.Builder
			for _, m := range regexp.MustCompile(`(?m)^S\d+\s+(PASS|FAIL|SKIP|SELF-TEST)`).FindAllStringSubmatch(out, -1) {
				got.WriteByte(map[string]byte{"PASS": 'P', "FAIL": 'F', "SKIP": 'S', "SELF-TEST": 'T'}[m[1]])
			}
			if got.String() != tc.statuses {
				t.Errorf("statuses %s, want %s\n%s", got.String(), tc.statuses, out)
			}
		})
	}
}

func TestConformJSON(t *testing.T) {
	code, out, errOut := runCLI("conform", "--json", "--sim-semantics", "upstream")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Schema, Command, Status, Provider, Semantics string
		Checks                                       []struct{ ID, Name, Status, Detail string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Schema != jsonSchema || rep.Command != "conform" || rep.Status != "pass" || rep.Provider != "sim" || rep.Semantics != "upstream" || len(rep.Checks) != 15 {
		t.Fatalf("got schema %q command %q status %q provider %q semantics %q with %d checks", rep.Schema, rep.Command, rep.Status, rep.Provider, rep.Semantics, len(rep.Checks))
	}
	for i, c := range rep.Checks {
		if want := "S" + string(rune('1'+i)); i < 9 && c.ID != want {
			t.Errorf("check %d is %s, want %s", i, c.ID, want)
		}
		if c.Status != "pass" && !(c.ID == "S8" && c.Status == "skip") && !(c.ID == "S11" && c.Status == "self-test") {
			t.Errorf("%s: %s: %s", c.ID, c.Status, c.Detail)
		}
	}
}
