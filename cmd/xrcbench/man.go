package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

	"github.com/xrcbench/xrcbench/internal/host"
)

// manCommand is hidden: make man (and make dist) calls it to write the
// man pages from the commands themselves, so they say what --help says.
const manCommand = "manpages"

func init() {
	subcommands = append(subcommands, func(stdout, _ io.Writer) *cobra.Command {
		return &cobra.Command{
			Use:    manCommand + " DIR",
			Short:  "Write a man page per command (section 1) and result.json's (section 5) into DIR",
			Hidden: true,
			Args:   cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := os.MkdirAll(args[0], 0o755); err != nil {
					return failure{err: err}
				}
				if err := writeManPages(cmd.Root(), args[0]); err != nil {
					return failure{err: err}
				}
				_, err := fmt.Fprintf(stdout, "man pages written to %s\n", args[0])
				return outputErr(err)
			},
		}
	})
}

// writeManPages writes xrcbench.1, xrcbench-run.1, ... for every command a
// user can call, with the sections of mansections.go, and xrcbench-result.5.
// The date is SOURCE_DATE_EPOCH's when set (reproducible packages), else
// today's.
func writeManPages(root *cobra.Command, dir string) error {
	root.DisableAutoGenTag = true
	omitManPages(root)
	literalText(root, map[*pflag.Flag]bool{})
	// The date cobra/doc would take, set here so that result.json's page
	// (section 5, not a command's) carries the same.
	date := time.Now()
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: not seconds since 1970", epoch)
		}
		date = time.Unix(sec, 0).UTC()
	}
	header := &doc.GenManHeader{
		Section: "1",
		Date:    &date,
		Source:  "xrcbench " + host.Version(),
		Manual:  "xrcbench manual",
	}
	if err := genManTree(root, header, dir); err != nil {
		return err
	}
	return writeResultPage(dir, header.Source, date)
}

// noManPage are the commands that get no man page, though they stay in
// --help: the packages (make install, make dist) ship bash, zsh and fish
// completions and no PowerShell one, so a page on PowerShell's script
// (xrcbench-completion-powershell.1) documented what no package installs,
// for a shell a Linux host running xrcbench does not have.
var noManPage = []string{"completion powershell"}

// omitManPages hides the noManPage commands under root, which cobra/doc
// then leaves out, from the pages and from their parent's SEE ALSO.
func omitManPages(root *cobra.Command) {
	for _, path := range noManPage {
		if c, rest, err := root.Find(strings.Fields(path)); err == nil && len(rest) == 0 && c != root {
			c.Hidden = true
		}
	}
}

// literalText makes the help texts of cmd and its subcommands come out of
// cobra/doc's Markdown rendering as they read in --help: "<kind>.hlog"
// must not lose "<kind>" as an HTML tag, nor "*" turn into emphasis. Flags
// that several commands share are escaped once.
func literalText(cmd *cobra.Command, done map[*pflag.Flag]bool) {
	cmd.Short, cmd.Long = markdownLiteral(cmd.Short), markdownLiteral(cmd.Long)
	escape := func(f *pflag.Flag) {
		if !done[f] {
			f.Usage, done[f] = markdownLiteral(f.Usage), true
		}
	}
	cmd.Flags().VisitAll(escape)
	cmd.PersistentFlags().VisitAll(escape)
	for _, sub := range cmd.Commands() {
		literalText(sub, done)
	}
}

// markdownLiteral is text that Markdown renders as it reads. Indented
// lines are code blocks, shown as they are: they stay unescaped.
func markdownLiteral(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, "    ") {
			lines[i] = markdownEscaper.Replace(l)
		}
	}
	return strings.Join(lines, "\n")
}

// markdownEscaper backslash-escapes every character Markdown gives a
// meaning (blackfriday's escapable characters).
var markdownEscaper = func() *strings.Replacer {
	var pairs []string
	for _, c := range "\\`*_{}[]()#+-.!:|&<>~" {
		pairs = append(pairs, string(c), "\\"+string(c))
	}
	return strings.NewReplacer(pairs...)
}()
