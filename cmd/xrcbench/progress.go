package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/safetext"
)

// Progress modes (--progress).
const (
	progressAuto   = "auto"   // live on a terminal, none otherwise
	progressAlways = "always" // live even when stderr is not a terminal
	progressNever  = "never"
)

// progressView shows a run's progress on stderr. On a terminal it is a live
// display drawn by mpb: a line per repetition with its phase and a bar of
// the planned time (or iterations), and below it a line per op kind with
// ops/s, p50, p99 and errors so far, redrawn about once a second as the
// engine reports. Not on a terminal (CI, pipes) there is nothing live, and
// at most one line per repetition, for runs of several. Quiet shows
// nothing at all.
type progressView struct {
	out   io.Writer // stderr
	live  bool
	lines bool // one line per finished repetition (not live)
	kinds []string
	label string // "point 2/6: " in a sweep

	mu  sync.Mutex
	cur bench.Progress // what the decorators draw

	// The live display, while it runs. p is also read by Write, from the
	// goroutines that forward the workers' stderr; the rest belongs to the
	// engine's goroutine (update) and to finish, which runs after it.
	p       atomic.Pointer[mpb.Progress]
	writing sync.RWMutex // Write holds it for reading while it writes through p
	bar     *mpb.Bar
	refresh chan any
	started time.Time
}

// isTerminal reports whether w is a terminal (under the safetext.Writer
// that stderr is).
func isTerminal(w io.Writer) bool {
	f, ok := raw(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// raw is the writer under a safetext.Writer: the live display draws with
// escape sequences of its own, and escapes what it is given (see Write).
func raw(w io.Writer) io.Writer {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		return u.Unwrap()
	}
	return w
}

// canDraw reports whether w is a terminal a display can be drawn on: one
// that knows its size (a pseudo-terminal nobody sized has none).
func canDraw(w io.Writer) bool {
	if !isTerminal(w) {
		return false
	}
	width, height, err := term.GetSize(int(raw(w).(*os.File).Fd()))
	return err == nil && width > 0 && height > 0
}

func newProgressView(stderr io.Writer, mode string, quiet bool, kinds []string, label string) *progressView {
	v := &progressView{out: stderr, kinds: kinds, label: label}
	switch {
	case quiet:
	case mode == progressAlways || mode == progressAuto && canDraw(stderr):
		v.live = true
	default:
		v.lines = true
	}
	return v
}

// start shows the display at once, before any worker has started: a
// terminal shows something within a moment of the command.
func (v *progressView) start(reps int) {
	if v.live {
		v.update(bench.Progress{Repetition: 1, Repetitions: reps, Phase: bench.PhaseStarting})
	}
}

// update is the engine's observer (bench.Options.Progress).
func (v *progressView) update(p bench.Progress) {
	if p.Phase == bench.PhaseDone {
		if v.bar != nil {
			v.bar.Abort(true) // its figures go in the line below
			v.bar = nil
		}
		// With one repetition the summary table says it all.
		if (v.live || v.lines) && p.Repetitions > 1 {
			v.println(v.label + repetitionLine(p))
		}
		return
	}
	if !v.live {
		return
	}
	v.mu.Lock()
	v.cur = p
	v.mu.Unlock()
	prog := v.p.Load()
	if prog == nil {
		// Unbuffered: a send that gets through is a redraw to come, which
		// finish relies on; a report that finds mpb busy skips its redraw.
		v.refresh = make(chan any)
		v.started = time.Now()
		// Redrawn when the engine reports (about once a second), not on a
		// timer of mpb's own: the figures change only then.
		opts := []mpb.ContainerOption{mpb.WithOutput(raw(v.out)), mpb.WithManualRefresh(v.refresh)}
		if !isTerminal(v.out) {
			opts = append(opts, mpb.ForceTTY()) // --progress=always
		}
		prog = mpb.New(opts...)
		v.p.Store(prog)
	}
	if v.bar == nil {
		fillers := make([]mpb.BarFiller, len(v.kinds))
		for i, k := range v.kinds {
			fillers[i] = mpb.BarFillerFunc(func(w io.Writer, st decor.Statistics) error {
				_, err := io.WriteString(w, fit(v.kindText(k), st.AvailableWidth)+"\n")
				return err
			})
		}
		v.bar = prog.New(1000, mpb.BarStyle().Lbound(" [").Rbound("] "),
			mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return v.headText() })),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return v.tailText() })),
			mpb.BarBtmExtender(fillers...))
	}
	switch {
	case p.Planned > 0:
		v.bar.SetCurrent(min(999, int64(1000*p.Elapsed/p.Planned)))
	case p.Iterations > 0 && p.Phase == bench.PhaseMeasuring:
		v.bar.SetCurrent(min(999, 1000*p.Done/p.Iterations))
	default:
		v.bar.SetCurrent(0)
	}
	select {
	case v.refresh <- time.Now():
	default:
	}
}

// Write prints above the live display while it runs (warnings, workers'
// stderr), and straight to stderr otherwise.
func (v *progressView) Write(b []byte) (int, error) {
	v.writing.RLock()
	if p := v.p.Load(); p != nil {
		_, err := p.Write([]byte(safetext.Text(string(b))))
		v.writing.RUnlock()
		if err == nil {
			select {
			case v.refresh <- time.Now():
			default:
			}
			return len(b), nil
		}
		return v.out.Write(b)
	}
	v.writing.RUnlock()
	return v.out.Write(b)
}

func (v *progressView) println(s string) { fmt.Fprintln(v, s) }

// finish removes the live display, before the summary is printed.
func (v *progressView) finish() {
	p := v.p.Load()
	if p == nil {
		return
	}
	if v.bar != nil {
		v.bar.Abort(true)
		v.bar = nil
	}
	// mpb holds what is written through it until its next redraw, and has
	// none when it stops: later writes go straight out, writes under way
	// finish, and one last redraw prints them.
	v.p.Store(nil)
	v.writing.Lock()
	v.writing.Unlock() //nolint:staticcheck // waits for the writes under way
	v.refresh <- time.Now()
	p.Wait()
}

func (v *progressView) headText() string {
	v.mu.Lock()
	p := v.cur
	v.mu.Unlock()
	s := fmt.Sprintf("%srepetition %d/%d  %-9s", v.label, p.Repetition, p.Repetitions, p.Phase)
	switch {
	case p.Phase == bench.PhaseStarting:
		s += "  " + roundDur(time.Since(v.started))
	case p.Planned > 0 && p.Elapsed > p.Planned:
		// Threads end at the end of a pass or round, which on a busy
		// machine can be a while after the planned end.
		s += fmt.Sprintf("  %s of %s, ending", roundDur(p.Elapsed), roundDur(p.Planned))
	case p.Planned > 0:
		s += fmt.Sprintf("  %s of %s", roundDur(p.Elapsed), roundDur(p.Planned))
	case p.Iterations > 0:
		s += fmt.Sprintf("  %d of %d iterations, %s", p.Done, p.Iterations, roundDur(p.Elapsed))
	}
	return s
}

func (v *progressView) tailText() string {
	v.mu.Lock()
	p := v.cur
	v.mu.Unlock()
	if p.Planned > 0 && p.Elapsed < p.Planned {
		return roundDur(p.Planned-p.Elapsed) + " left"
	}
	return ""
}

func (v *progressView) kindText(kind string) string {
	v.mu.Lock()
	p := v.cur
	v.mu.Unlock()
	for _, k := range p.Kinds {
		if k.Kind == kind {
			return "  " + kindFigures(k)
		}
	}
	what := "not measured yet"
	if p.Phase == bench.PhaseWarmup {
		what = "warming up (not measured)"
	}
	return fmt.Sprintf("  %-11s %s", kind, what)
}

func kindFigures(k bench.KindProgress) string {
	return fmt.Sprintf("%-11s %9s ops/s  p50 %7s  p99 %7s  errors %d", k.Kind, rate(k.OpsPerSec),
		ns(int64(k.P50)), ns(int64(k.P99)), k.Errors)
}

// repetitionLine is a finished repetition in one line.
func repetitionLine(p bench.Progress) string {
	parts := []string{fmt.Sprintf("repetition %d/%d: %s measured", p.Repetition, p.Repetitions, roundDur(p.Elapsed))}
	for _, k := range p.Kinds {
		parts = append(parts, fmt.Sprintf("%s %s ops/s p50 %s p99 %s errors %d", k.Kind, rate(k.OpsPerSec),
			ns(int64(k.P50)), ns(int64(k.P99)), k.Errors))
	}
	return strings.Join(parts, "; ")
}

// rate formats ops/s compactly: 950, 12.3k, 1.21M.
func rate(v float64) string {
	switch {
	case v < 1e3:
		return fmt.Sprintf("%.0f", v)
	case v < 1e6:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.2fM", v/1e6)
}

func roundDur(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// fit cuts s to the terminal's width, so a line never wraps (a wrapped
// line would throw off the redraw).
func fit(s string, width int) string {
	if r := []rune(s); width > 0 && len(r) > width {
		return string(r[:width])
	}
	return s
}
