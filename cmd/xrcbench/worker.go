package main

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

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
				// The protocol gets a private copy of stdout, and fd 1 becomes
				// stderr: a stray print from any library then shows up,
				// prefixed, in the coordinator's stderr instead of corrupting
				// the frames.
				proto, err := unix.Dup(1)
				if err != nil {
					return failure{err: err}
				}
				if err := unix.Dup2(2, 1); err != nil {
					return failure{err: err}
				}
				out := os.NewFile(uintptr(proto), "protocol")
				defer out.Close()
				if err := bench.WorkerMain(os.Stdin, out); err != nil {
					// Stopped by the coordinator, which knows why: say
					// nothing, or every ^C would print a line per worker.
					return failure{err: err, quiet: errors.Is(err, bench.ErrAborted)}
				}
				return nil
			},
		}
	})
}
