package main

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/bench"
)

// workerCommand is the name of the hidden subcommand the coordinator
// re-executes this binary with: Go cannot fork without exec.
const workerCommand = "__worker"

func init() {
	subcommands = append(subcommands, func(stdout, stderr io.Writer) *cobra.Command {
		return &cobra.Command{
			Use:    workerCommand,
			Short:  "Run one worker process of `xrcbench run` (internal)",
			Hidden: true,
			Args:   cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				// The protocol runs over the real stdin and stdout; the
				// coordinator forwards stderr with this worker's name.
				if err := bench.WorkerMain(os.Stdin, os.Stdout); err != nil {
					// Stopped by the coordinator, which knows why: say
					// nothing, or every ^C would print a line per worker.
					return failure{err: err, quiet: errors.Is(err, bench.ErrAborted)}
				}
				return nil
			},
		}
	})
}
