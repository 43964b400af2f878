package results

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// hdrJS runs testdata/hdrjs.js, HdrHistogram's JavaScript reader, with
// args and stdin, or skips the test saying what is missing.
func hdrJS(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, testenv.Node, "node is not installed: the independent HdrHistogram reader (npm hdr-histogram-js) cannot run")
	}
	if err := exec.Command(node, "-e", `require("hdr-histogram-js")`).Run(); err != nil {
		testenv.Skip(t, testenv.Node, "npm module hdr-histogram-js not found by node: `npm install hdr-histogram-js` in a folder and set NODE_PATH=that/node_modules")
	}
	cmd := exec.Command(node, append([]string{filepath.Join("testdata", "hdrjs.js")}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node hdrjs.js %v: %v", args, err)
	}
	return string(out)
}
