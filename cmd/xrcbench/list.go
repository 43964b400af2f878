package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

func init() {
	subcommands = append(subcommands, func(stdout, stderr io.Writer) *cobra.Command {
		var show string
		cmd := &cobra.Command{
			Use:   "list",
			Short: "List the providers (and whether they work here) and the built-in workloads",
			Long: `list shows every provider this build knows, whether it works on this machine
(and why not), and the built-in workloads with one line each. --show prints a
workload's spec: the YAML format --workload FILE reads, a starting point for
your own.`,
			Example: `  xrcbench list
  xrcbench list --show lifecycle > mine.yaml   # edit, then:
  xrcbench run --workload ./mine.yaml`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if show != "" {
					spec, err := workloads.Get(show)
					if err != nil {
						return usageError{err}
					}
					_, err = io.WriteString(stdout, spec.Source)
					return outputErr(err)
				}
				return outputErr(writeList(stdout, verbs.Providers(), workloads.Builtins()))
			},
		}
		cmd.Flags().StringVar(&show, "show", "", "print the spec of this workload (a built-in name or a file)")
		return cmd
	})
}

func writeList(w io.Writer, provs []verbs.ProviderInfo, specs []*workloads.Spec) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "providers:")
	for _, p := range provs {
		state := "available"
		if !p.Available {
			state = "unavailable"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.Name, state, p.Description)
		if !p.Available && p.Reason != "" {
			fmt.Fprintf(tw, "  \t\t(%s)\n", p.Reason)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\nworkloads (--workload NAME, or a YAML file in the same format):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range specs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Name, s.Mode, s.Description)
	}
	return tw.Flush()
}
