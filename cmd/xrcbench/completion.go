package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/suggest"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// flagError is every command's flag error: bad usage (exit 2), and for a
// flag the command does not have, the flags it was probably meant to be,
// as cobra suggests commands.
func flagError(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedShortnames() == "" {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		if hint := suggest.Phrase(suggest.For(ne.GetSpecifiedName(), names), func(n string) string { return "--" + n }); hint != "" {
			err = fmt.Errorf("%w (%s)", err, hint)
		}
	}
	return usageError{err}
}

// valueCompletions are the shell completions of flag values, by flag
// name, wherever a command has such a flag.
var valueCompletions = map[string]cobra.CompletionFunc{
	"workload":      completeWorkload,
	"provider":      completeProvider,
	"device":        completeDevice,
	"plan":          completeYAML,
	"qp-state":      completeWords(qpStateNames()...),
	"arrival":       completeWords(bench.ArrivalFixed, bench.ArrivalPoisson),
	"pin":           completeWords(string(host.PinAuto), string(host.PinCPU), string(host.PinNone)),
	"progress":      completeWords(progressAuto, progressAlways, progressNever),
	"sim-semantics": completeWords(string(verbs.Legacy), string(verbs.LegacyMlnx), string(verbs.Upstream)),
	"format":        completeFormat,
}

func qpStateNames() []string {
	var names []string
	for _, q := range verbs.QPStates {
		names = append(names, q.String())
	}
	return names
}

// completeWords offers a flag's fixed values, and never file names.
func completeWords(words ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, w := range words {
			if strings.HasPrefix(w, typed) {
				out = append(out, w)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFormat offers the formats of the command at hand: compare
// writes text, md or json; export the CI tools' formats.
func completeFormat(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if cmd.Name() == "export" {
		return completeWords(report.ExportFormatGAB, report.ExportFormatBencher, report.ExportFormatCSV, report.ExportFormatJUnit)(cmd, args, typed)
	}
	return completeWords("text", "md", "json")(cmd, args, typed)
}

// completeYAML offers YAML files (a plan).
func completeYAML(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// registerCompletions gives every flag of cmd and its subcommands named
// in valueCompletions its completion of values.
func registerCompletions(cmd *cobra.Command) {
	for name, complete := range valueCompletions {
		if cmd.Flags().Lookup(name) != nil {
			// Only fails for a flag the command lacks, or a second
			// registration: neither can happen here.
			_ = cmd.RegisterFlagCompletionFunc(name, complete)
		}
	}
	for _, sub := range cmd.Commands() {
		registerCompletions(sub)
	}
}

// completeWorkload offers the built-in workloads, and YAML files once
// what is typed looks like a path.
func completeWorkload(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if strings.ContainsAny(typed, "/.") {
		return completeYAML(cmd, args, typed)
	}
	var out []cobra.Completion
	for _, s := range workloads.Builtins() {
		if strings.HasPrefix(s.Name, typed) {
			out = append(out, cobra.CompletionWithDesc(s.Name, oneLine(s.Description)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeProvider offers every provider this build knows, saying which
// this machine lacks.
func completeProvider(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, p := range verbs.Providers() {
		if !strings.HasPrefix(p.Name, typed) {
			continue
		}
		desc := p.Description
		if !p.Available {
			desc = "not available here: " + p.Reason
		}
		out = append(out, cobra.CompletionWithDesc(p.Name, oneLine(desc)))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeDevice offers the devices of the provider given so far (the
// command's default otherwise): the sim's own, or those libibverbs lists,
// as `devices` shows them.
func completeDevice(cmd *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	provider := "sim"
	if f := cmd.Flags().Lookup("provider"); f != nil {
		provider = f.Value.String()
	}
	var out []cobra.Completion
	add := func(name, desc string) {
		if strings.HasPrefix(name, typed) {
			out = append(out, cobra.CompletionWithDesc(name, oneLine(desc)))
		}
	}
	switch provider {
	case "sim":
		add(verbs.SimDeviceName, "the emulated XRC device")
	case "rdma", "legacy":
		devs, err := verbs.Devices()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		for _, d := range devs {
			desc := "no XRC"
			if d.XRC {
				desc = "XRC"
			}
			add(d.Name, desc)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
