package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const (
	recipeScript = "../../test/ci/recipe.sh"
	recipeDoc    = "../../docs/ci.md"
)

// TestCIRecipe runs the recipe of docs/ci.md on the sim provider: a
// baseline, an unchanged candidate that passes, a candidate with a 25%
// slower registration that fails compare with exit 1 and a FAIL summary
// naming reg p50. The script checks each step and exits non-zero, saying
// which, when one goes otherwise.
func TestCIRecipe(t *testing.T) {
	bin := engineBinary(t)
	work := t.TempDir()
	cmd := exec.Command("sh", recipeScript, work)
	cmd.Env = append(os.Environ(), "XRCBENCH="+bin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", recipeScript, err, out.String())
	}
	summary, err := os.ReadFile(filepath.Join(work, "step-summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Two summaries appended, as two jobs would: PASS, then FAIL.
	pass := bytes.Index(summary, []byte("**xrcbench compare steady: PASS**"))
	failAt := bytes.Index(summary, []byte("**xrcbench compare steady: FAIL**"))
	if pass < 0 || failAt < pass || !bytes.Contains(summary[failAt:], []byte("| reg | p50 | gate |")) {
		t.Errorf("step summary is not PASS then FAIL with reg p50:\n%s", summary)
	}
}

// xrcbenchCommand finds an xrcbench command in a line of shell or YAML:
// from "xrcbench SUBCOMMAND" to the first redirection, pipe, list
// operator or end of line.
var xrcbenchCommand = regexp.MustCompile(`(?:^|[;&|]\s*|\bthen\s+|^-\s+|run:\s+)(xrcbench\s+(?:run|compare|export|history|report|sweep)\b[^;|>&]*)`)

func commandsIn(lines []string) []string {
	var cmds []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") {
			continue
		}
		for _, m := range xrcbenchCommand.FindAllStringSubmatch(l, -1) {
			if c := strings.Join(strings.Fields(m[1]), " "); !slices.Contains(cmds, c) {
				cmds = append(cmds, c)
			}
		}
	}
	slices.Sort(cmds)
	return cmds
}

// codeLines are the lines of the Markdown file's fenced code blocks.
func codeLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), "```") {
			in = !in
			continue
		}
		if in {
			lines = append(lines, sc.Text())
		}
	}
	return lines
}

// TestCIRecipeMatchesDocs: every xrcbench command of docs/ci.md (the
// command list, the GitHub workflow, the GitLab job) is one the recipe
// script runs, and the other way round, so the documentation cannot rot
// apart from what is tested. The sim settings are the same too.
func TestCIRecipeMatchesDocs(t *testing.T) {
	doc := codeLines(t, recipeDoc)
	script, err := os.ReadFile(recipeScript)
	if err != nil {
		t.Fatal(err)
	}
	scriptLines := strings.Split(string(script), "\n")
	docCmds, scriptCmds := commandsIn(doc), commandsIn(scriptLines)
	if len(docCmds) < 4 {
		t.Fatalf("docs/ci.md: only %d xrcbench commands found: %q", len(docCmds), docCmds)
	}
	if !slices.Equal(docCmds, scriptCmds) {
		t.Errorf("docs/ci.md and test/ci/recipe.sh run different xrcbench commands:\ndoc:    %q\nscript: %q", docCmds, scriptCmds)
	}
	simArgs := regexp.MustCompile(`--provider sim [^"\n]*`)
	docSim := slices.Compact(slices.Sorted(slices.Values(simArgs.FindAllString(strings.Join(doc, "\n"), -1))))
	scriptSim := simArgs.FindAllString(string(script), -1)
	if len(docSim) != 1 || len(scriptSim) == 0 || scriptSim[0] != docSim[0] {
		t.Errorf("the sim settings differ: doc %q, script's baseline %q", docSim, scriptSim)
	}
	// A hosted runner's name changes from job to job: a cache key or a
	// dashboard name built on it finds the baseline by chance and splits
	// one configuration's chart. Keys and names use the matrix entry.
	for i, l := range doc {
		if strings.Contains(l, "runner.name") {
			t.Errorf("docs/ci.md code line %d keys on runner.name, which is not stable across jobs: %s", i+1, strings.TrimSpace(l))
		}
	}
	if !slices.ContainsFunc(doc, func(l string) bool { return strings.Contains(l, "key: xrcbench-${{ matrix.id }}-") }) {
		t.Error("docs/ci.md: the GitHub cache key is not built on the matrix entry's id")
	}
}
