package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/internal/device"
	"github.com/xrcbench/xrcbench/internal/safetext"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

func init() {
	subcommands = append(subcommands, func(stdout, stderr io.Writer) *cobra.Command {
		var asJSON bool
		cmd := &cobra.Command{
			Use:   "devices",
			Short: "List the RDMA devices libibverbs sees, and what each can do for XRC",
			Long: `devices lists every RDMA device libibverbs reports, opening each to query it:
its XRC capability (IBV_DEVICE_XRC), firmware, ports (each one's state, active
MTU, link layer and GID table from sysfs: index, type IB, RoCE v1 or RoCE v2,
and address, to choose run's --ib-port and --gid-index from), NUMA node and
driver, whether the upstream ibv_open_qp
path (--provider rdma) and the legacy OFED ibv_reg_xrc_rcv_qp API (--provider
legacy) are usable on it, and how many QPs the kernel holds for it (LIVE_QPS,
with --json their numbers too).

The live QPs are the kernel's own list, read through RDMA netlink as
"rdma resource show qp" reads it: every QP of every process (in this PID
namespace) and the kernel's own (QP 1, GSI, where the initial namespace
asks). "n/a" where the kernel cannot be asked; a note says why.

The upstream calls are found out by calling them once per device, since
libibverbs fills every call a provider lacks with a stub that fails
EOPNOTSUPP: ibv_open_xrcd of a scratch domain on an anonymous file,
ibv_create_qp_ex of an XRC receive QP in it, and ibv_open_qp of a QP number
no QP has (EINVAL: implemented; EOPNOTSUPP: not). One "probe:" line per call
and device says what each call returned.

Where the library exports the legacy API, "legacy flavor:" says which
library implements it, and how that was found out: ofed1 (OFED 1.x, a
registration belongs to a device context) or mlnx-compat (MLNX_OFED 2.x to
4.x, a compatibility layer over the upstream calls where the process is the
registrant), told apart by whether it exports ibv_cmd_open_xrcd and
ibv_cmd_open_qp at IBVERBS_1.1 and by what a second reg of a scratch QP in
one process answers (EEXIST on mlnx-compat); unknown where the two disagree.

Exit status 1 when there is no device (with --json, a document with status
failed and no devices is still printed on stdout); the message says how to go on without one: --provider sim, or the
libibverbs test double (make fakeverbs).`,
			Example: `  xrcbench devices
  xrcbench devices --json
  xrcbench run --provider rdma --device mlx5_0   # benchmark one of them`,
			Args: cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				devs, err := device.Devices()
				if errors.Is(err, verbs.ErrNotSupported) {
					// No device here: still a list for a script (an
					// empty one), and a way to go on without hardware.
					err = failure{err: fmt.Errorf("%w; without an adapter, benchmark the emulated device (--provider sim, the default) "+
						"or build the libibverbs test double (make fakeverbs) and run with LD_LIBRARY_PATH=build/fakeverbs", err)}
					// Still a list for a script: an empty one.
					return jsonBeforeStart(stdout, asJSON, func() any {
						return devicesJSON{envelope: newEnvelope("devices", results.StatusFailed, "", err), Devices: []verbs.DeviceInfo{}}
					}, err)
				}
				if err != nil {
					err = failure{err: err}
					return jsonBeforeStart(stdout, asJSON, func() any {
						return devicesJSON{envelope: newEnvelope("devices", results.StatusFailed, "", err), Devices: []verbs.DeviceInfo{}}
					}, err)
				}
				if asJSON {
					err = writeJSON(stdout, devicesJSON{envelope: newEnvelope("devices", results.StatusOK, "", nil), Devices: devs})
				} else {
					err = writeDevices(stdout, devs)
				}
				return outputErr(err)
			},
		}
		cmd.Flags().BoolVar(&asJSON, "json", false, "write the devices as one JSON document (schema, command, status, devices: the device objects)")
		return cmd
	})
}

func writeDevices(w io.Writer, devs []verbs.DeviceInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tXRC\tOPEN_QP\tLEGACY_API\tFW_VER\tPORTS\tNUMA\tDRIVER\tLIVE_QPS")
	var notes []string
	for _, d := range devs {
		openQP := yesNo(d.OpenQP)
		if why := d.Extra["open_qp"]; why != "" && !d.OpenQP {
			openQP = "?"
			notes = append(notes, d.Name+": open_qp "+why)
		}
		numa := "-"
		if d.NUMANode >= 0 {
			numa = fmt.Sprint(d.NUMANode)
		}
		xrc, legacy, ports := yesNo(d.XRC), yesNo(d.LegacyAPI), fmt.Sprint(d.Ports)
		if d.XRC && lacksOpenQP(d) {
			// qedr: IBV_DEVICE_XRC does not mean a QP can be shared.
			notes = append(notes, d.Name+": XRC domains but no ibv_open_qp (its provider fails it EOPNOTSUPP): "+
				"no second process can open its XRC receive QPs; run --provider rdma refuses it, conform checks S1 and S11 only")
		}
		if e := d.Extra["error"]; e != "" {
			// It could not be opened: its capabilities are unknown, not "no".
			xrc, openQP, legacy, ports = "?", "?", "?", "-"
			notes = append(notes, d.Name+": "+e)
		}
		live := "n/a"
		if d.LiveQPs != nil {
			live = fmt.Sprint(*d.LiveQPs)
		}
		// Escaped here, not only at stdout: the columns are as wide as
		// what is shown, and a tab in a name is no column.
		cell := safetext.Line
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(d.Name), xrc, openQP, legacy, cell(dash(d.FWVer)), ports, numa, cell(dash(d.Driver)), live)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(devs) > 0 && devs[0].Library != "" {
		fmt.Fprintf(w, "\nlibibverbs: %s", devs[0].Library)
		if p := devs[0].Extra["libibverbs"]; p != "" {
			fmt.Fprintf(w, " (%s)", p)
		}
		fmt.Fprintln(w)
	}
	for _, d := range devs {
		if syms := d.Extra["legacy_symbols"]; syms != "" {
			// The legacy layouts are an assumption (see the README): which
			// library versions the calls come from says what was relied on.
			fmt.Fprintf(w, "legacy XRC symbols: %s\n", syms)
			// Which library they are says what a registration is.
			if d.LegacyFlavor != "" {
				fmt.Fprintf(w, "legacy flavor: %s (%s)\n", d.LegacyFlavor, d.Extra["legacy_flavor_evidence"])
			}
			break
		}
	}
	for _, d := range devs {
		for _, p := range d.PortInfo {
			mtu := "active MTU unknown"
			if p.ActiveMTU > 0 {
				mtu = fmt.Sprintf("active MTU %d", p.ActiveMTU)
			}
			fmt.Fprintf(w, "port: %s/%d %s, %s, %s\n", d.Name, p.Port, p.State, mtu, p.LinkLayer)
			// The GID table, so --gid-index can be chosen (--ib-port
			// chooses the port).
			for _, g := range p.GIDs {
				fmt.Fprintf(w, "  gid %d: %s %s\n", g.Index, dash(g.Type), g.Address)
			}
		}
	}
	// Live QPs: where the kernel could not be asked, why; once when every
	// device has the same reason (no RDMA netlink at all).
	var why []string
	for _, d := range devs {
		if d.LiveQPsNote != "" {
			why = append(why, d.LiveQPsNote)
		}
	}
	if len(why) == len(devs) && len(why) > 0 && slices.Equal(why, slices.Repeat(why[:1], len(why))) && len(devs) > 1 {
		notes = append(notes, "live QPs "+why[0])
	} else {
		for _, d := range devs {
			if d.LiveQPsNote != "" {
				notes = append(notes, d.Name+": live QPs "+d.LiveQPsNote)
			}
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note: "+n)
	}
	// OPEN_QP is only as good as how it was found out: say it.
	for _, d := range devs {
		for _, c := range d.Capabilities {
			fmt.Fprintf(w, "probe: %s %s %s: %s\n", d.Name, c.Name, yesNo(c.Supported), c.How)
		}
	}
	return nil
}

// lacksOpenQP reports whether the probes found d's XRC domains and creates
// working and ibv_open_qp missing (EOPNOTSUPP), as against not known.
func lacksOpenQP(d verbs.DeviceInfo) bool {
	caps := map[string]verbs.Capability{}
	for _, c := range d.Capabilities {
		caps[c.Name] = c
	}
	o, ok := caps["open_qp"]
	return ok && caps["open_xrcd"].Supported && caps["create_qp_ex"].Supported && !o.Supported && !strings.HasPrefix(o.How, "not probed")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
