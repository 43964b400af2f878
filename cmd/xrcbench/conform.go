package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/conform"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

func init() { subcommands = append(subcommands, newConformCmd) }

func newConformCmd(stdout, stderr io.Writer) *cobra.Command {
	var provider, device, semantics string
	var asJSON bool
	var ibPort, gidIndex int
	cmd := &cobra.Command{
		Use:   "conform",
		Short: "Check a provider against the XRC semantics S1–S15",
		Long: `conform runs the XRC semantics table S1–S15 (docs/design.md) against a
provider and prints each check's verdict; it exits 1 when one fails.

What the checks are: create registers the creator, reg adds a registrant, reg again is idempotent
(legacy) or a counted handle (upstream), the last unreg destroys the QP, reg of
unknown or foreign QPs fails with EINVAL, closing a domain while registered is
EBUSY, a killed process's registrations are dropped (with real child processes),
and a device without XRC refuses domains (named at a device with XRC, S11 runs
on a device of the host without it, one of the same driver first, and names
it; with none it skips). S12–S15 are the QP state transitions
run --qp-state makes, as the kernel's state table allows them: RESET to RTR
without INIT is EINVAL, as are RTR to INIT and RTR to RTR; a registrant's
modify moves the QP for all; the last unreg destroys a QP in RTR. They skip
on a port that is down or has no address.

On --provider rdma, S8 and S9 are asked of the kernel itself, in a child
process (the provider's own guards answer them before any call in runs), S10
expects the running kernel's behaviour (before Linux 4.13 a dead process's
last handle is only closed and its QP stays with the XRCD), and after every
last unreg the device's own QP list (RDMA netlink) must no longer name the
QP, since ibv_destroy_qp can return 0 for a destroy that failed; a
"destructions:" line says how many were confirmed, or why none could be.
-i/--ib-port and -x/--gid-index choose the port and GID as for run.

Each semantics is checked against its own column of the table. On the
legacy provider that is the flavor of the library it is bound to (devices
says which): ofed1, OFED 1.x, where a registrant is a device context, or
mlnx-compat, MLNX_OFED's compatibility layer (and --sim-semantics
legacy-mlnx), where it is the process: a second reg in the process is EEXIST,
an unreg through any of its contexts or domains destroys its one handle, the
second registrant of S4 and S10 is a child process, and S9 also gives up a
device holding a QP and registers that QP again from a new context.

One line per check: id, PASS/FAIL/SKIP/SELF-TEST, and what was seen against
what was expected. Checks a provider cannot do are SKIP with the reason. On
the sim, S11 is SELF-TEST: the sim is configured without XRC and answers with
its own table's errno, so it passes by construction and is not evidence.

A device whose provider has XRC domains but no ibv_open_qp (qedr; devices
shows OPEN_QP no) cannot share a QP: run refuses it, and conform checks what
it can (S1, confirmed through the device's own QP list, and S11) and skips
every other check as "cannot run: the provider has XRC domains but no
ibv_open_qp", neither passed nor failed (--json: "no_open_qp" says why). Exit status 1
when any check fails, or when none could run (the null provider keeps no
state, so it has nothing to check).`,
		Example: `  xrcbench conform
  xrcbench conform --sim-semantics upstream --json
  xrcbench conform --provider rdma --device mlx5_0
  xrcbench conform --provider legacy`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !verbs.IsProvider(provider) {
				return usagef("unknown provider %q: want one of %s", provider, bench.ProviderNames())
			}
			sem, err := verbs.ParseSemantics(semantics)
			if err != nil {
				return usagef("--sim-semantics: %v", err)
			}
			if provider != "sim" && cmd.Flags().Changed("sim-semantics") {
				return usagef("--sim-semantics applies to --provider sim only")
			}
			gid, err := pathChoice(provider, device, ibPort, gidIndex)
			if err != nil {
				return err
			}
			work, err := os.MkdirTemp("", "xrcbench-conform-")
			if err != nil {
				return failure{err: err}
			}
			defer os.RemoveAll(work)
			rep, err := conform.Conform(verbs.Options{Provider: provider, Device: device, Port: ibPort, GIDIndex: gid,
				Sim: verbs.SimOptions{Semantics: sem}}, work)
			if err != nil {
				err = failure{err: fmt.Errorf("conform: %w", err)}
				return jsonBeforeStart(stdout, asJSON, func() any {
					return conformJSON{envelope: newEnvelope("conform", results.StatusFailed, "", err)}
				}, err)
			}
			if asJSON {
				status := "pass"
				if rep.Failed() {
					status = "fail"
				}
				if err := writeJSON(stdout, conformJSON{envelope: newEnvelope("conform", status, "", nil), ConformReport: rep}); err != nil {
					return err
				}
			} else {
				printConform(stdout, rep)
			}
			if rep.Failed() {
				return failure{err: fmt.Errorf("conformance failed"), quiet: !asJSON}
			}
			if checked(rep) == 0 {
				// Nothing was verified: that is not conformance.
				return failure{err: fmt.Errorf("no check could run on provider %s: %s", rep.Provider, rep.Checks[0].Detail)}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&provider, "provider", "sim", "provider: "+bench.ProviderNames())
	fs.StringVarP(&device, "device", "d", "", "device name (rdma, legacy); default the first with XRC")
	registerPath(fs, &ibPort, &gidIndex)
	fs.StringVar(&semantics, "sim-semantics", "legacy", "sim provider: legacy (ibv_reg_xrc_rcv_qp as OFED 1.x), legacy-mlnx (as MLNX_OFED's compatibility layer) or upstream (ibv_open_qp)")
	fs.BoolVar(&asJSON, "json", false, `print {"schema", "command", "status": pass or fail, "provider", "semantics", "checks": [{"id", "name", "status", "detail"}]}; a check's status is pass, fail, skip or self-test`)
	return cmd
}

// checked counts the checks that are evidence (passed or failed).
func checked(rep conform.ConformReport) int {
	n := 0
	for _, c := range rep.Checks {
		if c.Evidence() {
			n++
		}
	}
	return n
}

func printConform(w io.Writer, rep conform.ConformReport) {
	fmt.Fprintf(w, "conform: provider %s, device %s, %s semantics\n", rep.Provider, rep.Device, rep.Semantics)
	if rep.NoOpenQP != "" {
		// Said once, above the table whose rows it empties.
		fmt.Fprintln(w, "no open_qp: "+rep.NoOpenQP)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	counts := map[string]int{}
	for _, c := range rep.Checks {
		counts[c.Status]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, strings.ToUpper(c.Status), c.Name, c.Detail)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped", counts[conform.CheckPass], counts[conform.CheckFail], counts[conform.CheckSkip])
	if n := counts[conform.CheckSelfTest]; n > 0 {
		fmt.Fprintf(w, ", %d self-test(s) of the sim, not counted as evidence", n)
	}
	fmt.Fprintln(w)
	if rep.Destructions != "" {
		fmt.Fprintln(w, "destructions: "+rep.Destructions)
	}
}
