package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// helpExamples is how many examples --help shows; `xrcbench help CMD` and
// the man page show them all.
const helpExamples = 2

// shortHelp makes --help a synopsis a terminal holds: the description's
// first paragraph, the flags and the first examples, with where the rest
// is. `xrcbench help CMD` and the man pages (written from the same
// commands) give the whole description, as git's -h and --help do. The
// root's help, a list of the commands, stays whole.
func shortHelp(root *cobra.Command) {
	full := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root {
			full(c, args)
			return
		}
		long, example := c.Long, c.Example
		c.Long, c.Example = synopsis(c)
		full(c, args)
		c.Long, c.Example = long, example
	})
	help, _, err := root.Find([]string{"help"})
	if err != nil || help == root {
		return
	}
	help.Short = "Help about any command: its whole description and every example"
	help.Run = func(c *cobra.Command, args []string) {
		target, _, err := root.Find(args)
		if target == nil || err != nil {
			c.Printf("Unknown help topic %#q\n", args)
			full(root, nil)
			return
		}
		full(target, nil)
	}
}

// synopsis is what --help shows of c's description and examples.
func synopsis(c *cobra.Command) (long, example string) {
	paras := strings.Split(strings.TrimSpace(c.Long), "\n\n")
	examples := strings.Split(strings.TrimRight(c.Example, "\n"), "\n\n")
	long, example = paras[0], c.Example
	if len(examples) > helpExamples {
		example = strings.Join(examples[:helpExamples], "\n\n")
	}
	if len(paras) > 1 || len(examples) > helpExamples {
		path := strings.TrimPrefix(c.CommandPath(), "xrcbench ")
		long += fmt.Sprintf("\n\nEvery setting, exit status and example: xrcbench help %s or man %s; the method: docs/design.md.",
			path, strings.ReplaceAll(c.CommandPath(), " ", "-"))
	}
	return long, example
}
