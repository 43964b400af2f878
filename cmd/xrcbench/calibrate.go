package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/internal/calibrate"
	"github.com/xrcbench/xrcbench/internal/loadavg"
	"github.com/xrcbench/xrcbench/verbs"
)

func init() { subcommands = append(subcommands, newCalibrateCmd) }

func newCalibrateCmd(stdout, stderr io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure the harness's own costs on this machine against its targets",
		Long: `calibrate measures what the harness itself costs on this machine and judges
it against targets; it exits 1 when one is missed.

What it measures: one read of the timer, the batch loop's reported latency on the null provider against one timer read,
the cgo calls per operation, the sim device's uncontended reg+unreg pair, and
whether the sim cost model reports the cost it was given (destroy=100us);
then the engine's hot path, one thread running op programs: its operations
per CPU-second on null against the floor of timing an operation, chained
timer reads around a call of the null provider, each counted as the engine
counts (>= 0.9, at 1 and 256 QPs), its p50 against the floor's (<= 1.1), its
coverage (the timed share of its time: >= 95% for steady and sharded on null
and sim at no cost, >= 99% with a 2us cost, at 1 and 256 QPs), and steady's
rate at 1 QP against 16 on sim (>= 0.9). The engine against a bare loop of
timer reads is shown and not judged: it holds what this machine charges for
a call and a count, which the floor against the timer shows (<= 1.5).

The hot path's targets are ratios to figures measured in the same run (the
references and the engine in alternating slices, the median of their ratios),
so a shared, noisy machine moves them little; the sim pair's 250 ns and the cost
model's +5% are fixed bounds, which a slow machine can miss. Each figure held
to a ratio, the null op and the sim pair come from short slices, and only the
slices the measuring thread ran through without a context switch count: one
in which another process took its CPU measures the machine. When fewer than a
quarter of a figure's slices ran so, the machine is too busy to judge it: the
figure says "not judged" (busy in --json) and is no miss. Exit status 1 when a
target is missed or not judged: rerun on a quieter machine before trusting
small differences.`,
		Example: "  xrcbench calibrate\n  xrcbench calibrate --json",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// A calibration cut short says nothing: the first stop signal
			// removes its folder (tens of MB of sim devices, once left in
			// TMPDIR by every ^C) and ends it. One killed outright leaves
			// it to the next calibrate, which removes it. Caught from
			// before the folder exists to after it is gone.
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, stopSignals...)
			defer signal.Stop(sigs)
			var (
				mu       sync.Mutex
				remove   = func() {}
				stopping atomic.Bool
			)
			done := make(chan struct{})
			defer close(done)
			go func() {
				select {
				case s := <-sigs:
					stopping.Store(true)
					mu.Lock()
					remove()
					fmt.Fprintf(stderr, "xrcbench: calibrate: %v: stopped, its folder removed; nothing is kept\n", s)
					os.Exit(exitFailed)
				case <-done:
				}
			}()
			// What fails once the folder is being removed under it is no
			// failure of its own: the stop's line is the one said.
			fail := func(err error) error {
				if stopping.Load() {
					select {} // os.Exit is on its way
				}
				return failure{err: err}
			}
			mu.Lock()
			dir, rm, err := verbs.CalibrationDir()
			if err == nil {
				remove = rm
			}
			mu.Unlock()
			if err != nil {
				return fail(err)
			}
			defer func() { mu.Lock(); remove(); mu.Unlock() }()
			ms, err := calibrate.Run(dir)
			if err != nil {
				return fail(err)
			}
			missed, busy := 0, 0
			for _, m := range ms {
				switch {
				case m.Missed():
					missed++
				case m.Busy:
					busy++
				}
			}
			if asJSON {
				status := "ok"
				if missed > 0 {
					status = "missed"
				}
				if err := writeJSON(stdout, calibrateJSON{envelope: newEnvelope("calibrate", status, "", nil), Measurements: ms, Missed: missed, Busy: busy}); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "measurement\tvalue\ttarget\t\tdetail")
				for _, m := range ms {
					verdict := ""
					switch {
					case m.Busy:
						verdict = "not judged"
					case m.Target != "":
						verdict = map[bool]string{true: "ok", false: "MISSED"}[m.OK]
					}
					fmt.Fprintf(tw, "%s\t%.4g %s\t%s\t%s\t%s\n", m.Name, m.Value, m.Unit, m.Target, verdict, m.Detail)
				}
				tw.Flush()
			}
			switch {
			case missed > 0 && busy > 0:
				return failure{err: fmt.Errorf("calibrate: %d target(s) missed, %d not judged: the machine was too busy", missed, busy)}
			case missed > 0:
				return failure{err: fmt.Errorf("calibrate: %d target(s) missed", missed)}
			case busy > 0:
				// Nothing missed, and nothing to trust either: not a pass.
				return failure{err: fmt.Errorf("calibrate: %d target(s) not judged: the machine was too busy (other processes kept taking the CPU; load average %.2f); rerun on a quieter machine", busy, loadavg.Read())}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"schema", "command", "status": ok or missed, "measurements": [{"name", "value", "unit", "target", "ok", "busy", "detail"}], "missed", "busy"}`)
	return cmd
}
