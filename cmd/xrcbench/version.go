package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/verbs"
)

// buildRevision, set at link time by make (-X main.buildRevision=...), is
// the full revision for builds without Go's VCS stamping (-buildvcs=false).
var buildRevision string

// versionText says what this binary is: the version a result records, the
// full VCS revision it was built from, the Go that built it, and whether
// the rdma provider is in it (a build without the rdma-core headers
// leaves it out).
func versionText() string {
	rev, when, modified := buildRevision, "", false
	if rev == "" {
		rev = "unknown (built without VCS information)"
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if when != "" {
		rev += " (" + when + ")"
	}
	if modified {
		rev += ", with uncommitted changes"
	}
	// Every cgo build has it; whether libibverbs loads is the run's
	// question (xrcbench list), not the binary's.
	rdma := "built (libibverbs.so.1 is loaded when used)"
	if !verbs.CgoBuilt {
		rdma = verbs.NoCgo
	}
	return fmt.Sprintf("xrcbench %s\nrevision: %s\ngo: %s %s/%s\nrdma provider: %s\n",
		host.Version(), rev, runtime.Version(), runtime.GOOS, runtime.GOARCH, rdma)
}

func init() {
	subcommands = append(subcommands, func(stdout, _ io.Writer) *cobra.Command {
		return &cobra.Command{
			Use:   "version",
			Short: "Print the version, revision, Go version and whether the rdma provider is built",
			Long: `version prints what this binary is: the version its results record
(environment.xrcbench_version: make build's git describe; without it the
module's release tag from Go's build information, as go install
github.com/xrcbench/xrcbench/cmd/xrcbench@<tag> records it, else the VCS
revision, else unknown), the VCS revision it was built from, the Go
version that built it, and whether the rdma provider is compiled in (it is
in every cgo build, and loads libibverbs.so.1 only when used: xrcbench list
says whether it can here).
xrcbench --version prints the same.`,
			Example: `  xrcbench version
  xrcbench --version`,
			Args: cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				_, err := io.WriteString(stdout, versionText())
				return outputErr(err)
			},
		}
	})
}
