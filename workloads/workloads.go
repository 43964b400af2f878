package workloads

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/xrcbench/xrcbench/internal/regfile"
	"github.com/xrcbench/xrcbench/internal/suggest"
	"github.com/xrcbench/xrcbench/internal/yamlstrict"
	"github.com/xrcbench/xrcbench/results"
)

// Mode says how threads run the phases.
type Mode string

const (
	// Loop: each thread runs the phases back to back on its QPs, with no
	// synchronisation with other threads.
	Loop Mode = "loop"
	// Rounds: every phase of a round is run by all threads together and
	// ends at a barrier of all threads of all processes.
	Rounds Mode = "rounds"
)

// Scope says who works on which QPs.
type Scope string

const (
	Shared    Scope = "shared"     // every thread works on the same QPs
	PerThread Scope = "per_thread" // each thread has its own QPs
)

// Operation kinds a phase can run. They are also the op kinds of the
// results (results.OpKinds).
const (
	OpCreate     = "create"
	OpReg        = "reg"
	OpUnreg      = "unreg"      // an unreg that must leave other registrations
	OpUnregLast  = "unreg_last" // an unreg that must destroy the QP
	OpRegInvalid = "reg_invalid"
	OpRegForeign = "reg_foreign"
)

var ops = []string{OpCreate, OpReg, OpUnreg, OpUnregLast, OpRegInvalid, OpRegForeign}

// Who runs a phase.
const (
	ByEach         = "each"            // loop mode: every thread on its QPs
	ByAll          = "all"             // rounds: every thread
	ByCreator      = "creator"         // rounds: the creator of each QP
	ByCloser       = "closer"          // rounds: the designated closer of each QP
	ByAllButCreat  = "all_but_creator" // rounds: every thread but the creator
	ByAllButCloser = "all_but_closer"  // rounds: every thread but the closer
)

var loopBy = []string{ByEach}
var roundsBy = []string{ByAll, ByCreator, ByCloser, ByAllButCreat, ByAllButCloser}

// Spec is one workload.
type Spec struct {
	Name        string  `yaml:"name"`
	Description string  `yaml:"description"`
	Mode        Mode    `yaml:"mode"`
	QPs         QPSpec  `yaml:"qps"`
	Phases      []Phase `yaml:"phases"`
	Storm       *Storm  `yaml:"storm"`
	// Gates are the metrics a comparison of the workload gates on,
	// KIND.METRIC ("reg.p50", "storm.makespan"): what it exists to
	// measure, and no more, since every gate tested at alpha is a chance
	// of a false alarm. Left out: the p50 of every kind (a storm: its
	// makespan).
	Gates []string `yaml:"gates"`
	// Headline is the figure a report of the workload leads with, one
	// KIND.METRIC; left out: the first gate.
	Headline string `yaml:"headline"`

	// Source is the spec's text as read, for the result's config.
	Source string `yaml:"-"`
	// File is the path the spec was read from, "" for a built-in.
	File string `yaml:"-"`
}

// QPSpec says which QPs a run works on.
type QPSpec struct {
	Scope Scope `yaml:"scope"`
	// Holder: one extra registrant, outside the measured threads, creates
	// the QPs before the run and holds a registration until after it, so
	// no measured unreg destroys them.
	Holder bool `yaml:"holder"`
}

// Phase is one step of a pass.
type Phase struct {
	Op string `yaml:"op"`
	By string `yaml:"by"`
	// Expect is "ok" or an errno name such as "EINVAL": what every
	// operation of the phase must return. Anything else is an error of the
	// phase's kind. Empty means the op's natural outcome (EINVAL for
	// reg_invalid and reg_foreign, ok otherwise).
	Expect string `yaml:"expect"`

	Line int `yaml:"-"` // line of the phase in the spec, for messages
}

// ExpectOK reports whether the phase's operations must succeed.
func (p Phase) ExpectOK() bool { return p.Expect == "ok" }

// Kinds lists the op kinds the spec produces, in results order.
func (s *Spec) Kinds() []string {
	if s.Mode == StormMode {
		return s.stormKinds()
	}
	var out []string
	for _, op := range ops {
		for _, p := range s.Phases {
			if p.Op == op {
				out = append(out, op)
				break
			}
		}
	}
	return out
}

// Creates reports whether the measured threads create QPs.
func (s *Spec) Creates() bool {
	if s.Mode == StormMode {
		return true
	}
	for _, p := range s.Phases {
		if p.Op == OpCreate {
			return true
		}
	}
	return false
}

// Uses reports whether some phase runs op.
func (s *Spec) Uses(op string) bool {
	for _, p := range s.Phases {
		if p.Op == op {
			return true
		}
	}
	return false
}

// SyntaxError is a problem in a spec, with the line it is on.
type SyntaxError struct {
	File string // "" for a built-in or text
	Line int    // 0 when unknown
	Msg  string
}

func (e *SyntaxError) Error() string {
	where := e.File
	if where == "" {
		where = "workload"
	}
	if e.Line > 0 {
		where += fmt.Sprintf(":%d", e.Line)
	}
	return where + ": " + e.Msg
}

// ErrUnknown is returned by Get for a name that is neither a built-in nor
// a file.
var ErrUnknown = errors.New("unknown workload")

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtins returns the built-in workloads, sorted by name.
func Builtins() []*Spec {
	entries, err := builtinFS.ReadDir("builtin")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	var out []*Spec
	for _, e := range entries {
		data, err := builtinFS.ReadFile(path.Join("builtin", e.Name()))
		if err != nil {
			panic(err)
		}
		s, err := Parse(data, "")
		if err != nil {
			// A broken built-in is a build defect; TestBuiltins catches it.
			panic(fmt.Sprintf("built-in workload %s: %v", e.Name(), err))
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names lists the built-in workloads.
func Names() []string {
	var names []string
	for _, s := range Builtins() {
		names = append(names, s.Name)
	}
	return names
}

// Get returns the built-in called nameOrFile, or else parses the file of
// that path. A name that is neither is ErrUnknown.
func Get(nameOrFile string) (*Spec, error) {
	for _, s := range Builtins() {
		if s.Name == nameOrFile {
			return s, nil
		}
	}
	data, err := regfile.ReadFile(nameOrFile, regfile.MaxWorkload)
	if errors.Is(err, regfile.ErrRefused) {
		return nil, fmt.Errorf("workload file %w", err)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(nameOrFile, "/.") {
			hint := suggest.Phrase(suggest.For(nameOrFile, Names()), strconv.Quote)
			if hint != "" {
				hint += " "
			}
			return nil, fmt.Errorf("%w %q: %sbuilt-ins are %s, or give a YAML file", ErrUnknown, nameOrFile, hint, strings.Join(Names(), ", "))
		}
		return nil, fmt.Errorf("%w %q: %v", ErrUnknown, nameOrFile, err)
	}
	return Parse(data, nameOrFile)
}

// Parse reads and validates a spec. Unknown keys, wrong types and
// impossible phase orders are *SyntaxError values with line numbers.
// The checks run in a fixed order and the first that fails is the one
// reported: the mode decides which of the others apply.
func Parse(data []byte, file string) (*Spec, error) {
	s, d, err := decodeSpec(data, file)
	if err != nil {
		return nil, err
	}
	if err := d.checkNameAndDescription(s); err != nil {
		return nil, err
	}
	switch s.Mode {
	case Loop, Rounds:
		err = d.checkPhased(s)
	case StormMode:
		err = parseStorm(s, d.root, d.fail, d.line)
	case "":
		err = d.fail(d.root.Line, "missing mode (loop, rounds or storm)")
	default:
		err = d.fail(d.line("mode"), "mode %q: want loop, rounds or storm", s.Mode)
	}
	if err != nil {
		return nil, err
	}
	if err := d.checkGates(s); err != nil {
		return nil, err
	}
	return s, nil
}

// checkGates checks the gates and headline against the kinds the spec
// measures, and fills in the defaults of those left out.
func (d specDoc) checkGates(s *Spec) error {
	storm := s.Mode == StormMode
	kinds := s.Kinds()
	if n := find(d.root, "gates"); n != nil && len(s.Gates) == 0 {
		return d.fail(n.Line, "gates: name at least one KIND.METRIC, or leave gates out")
	}
	switch {
	case s.Gates != nil:
	case storm:
		s.Gates = []string{results.StormKind + ".makespan"}
	default:
		for _, k := range kinds {
			s.Gates = append(s.Gates, k+".p50")
		}
	}
	seen := map[string]bool{}
	for i, g := range s.Gates {
		line := d.line("gates")
		if n := find(d.root, "gates"); n != nil && i < len(n.Content) {
			line = n.Content[i].Line
		}
		if err := results.CheckGate(g, kinds, storm); err != nil {
			return d.fail(line, "%v", err)
		}
		if seen[g] {
			return d.fail(line, "gate %q named twice", g)
		}
		seen[g] = true
	}
	if s.Headline == "" {
		s.Headline = s.Gates[0]
	}
	if err := results.CheckGate(s.Headline, kinds, storm); err != nil {
		return d.fail(d.line("headline"), "headline: %v", err)
	}
	return nil
}

// specDoc is a spec's YAML tree, kept beside the decoded Spec because a
// decoded value has lost its line: every message names the line of the
// key it is about.
type specDoc struct {
	file string
	root *yaml.Node
}

// fail is a *SyntaxError at line of the spec's file.
func (d specDoc) fail(line int, format string, args ...any) error {
	return &SyntaxError{File: d.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// line is the line of the key at the path keys; where a key is missing,
// of the nearest key above it: a missing key is reported where it should
// have been.
func (d specDoc) line(keys ...string) int {
	n := d.root
	for _, k := range keys {
		if m := find(n, k); m != nil {
			n = m
		}
	}
	return n.Line
}

// decodeSpec decodes data strictly and gives each phase its line, for
// the messages of the checks that follow and of simulate.
func decodeSpec(data []byte, file string) (*Spec, specDoc, error) {
	d := specDoc{file: file}
	var s Spec
	root, yerr := yamlstrict.Decode(data, &s)
	if yerr != nil {
		return nil, d, d.fail(yerr.Line, "%s", yerr.Msg)
	}
	if root == nil {
		return nil, d, d.fail(0, "empty spec")
	}
	d.root = root
	s.Source = string(data)
	s.File = file
	if phases := find(root, "phases"); phases != nil {
		for i := range s.Phases {
			if i < len(phases.Content) {
				s.Phases[i].Line = phases.Content[i].Line
			}
		}
	}
	return &s, d, nil
}

// checkNameAndDescription checks what `xrcbench list` shows. A name is
// given to --workload, where a slash would read as a file's path and a
// space as two words.
func (d specDoc) checkNameAndDescription(s *Spec) error {
	if s.Name == "" {
		return d.fail(d.root.Line, "missing name")
	}
	if strings.ContainsAny(s.Name, " /\t") {
		return d.fail(d.line("name"), "name %q: no spaces or slashes", s.Name)
	}
	if s.Description == "" {
		return d.fail(d.root.Line, "missing description")
	}
	return nil
}

// checkPhased checks a loop or rounds spec: its QPs, each phase on its
// own, the QPs against the phases, and last the phase order on the model
// of the registration state (simulate), which relies on all the rest.
func (d specDoc) checkPhased(s *Spec) error {
	if n := find(d.root, "storm"); n != nil {
		return d.fail(n.Line, "a storm block needs mode storm")
	}
	switch s.QPs.Scope {
	case Shared, PerThread:
	case "":
		return d.fail(d.line("qps"), "missing qps.scope (shared or per_thread)")
	default:
		return d.fail(d.line("qps", "scope"), "qps.scope %q: want shared or per_thread", s.QPs.Scope)
	}
	if len(s.Phases) == 0 {
		return d.fail(d.root.Line, "no phases")
	}
	for i := range s.Phases {
		if err := d.checkPhase(s.Mode, i, &s.Phases[i]); err != nil {
			return err
		}
	}
	if err := d.checkQPsFitPhases(s); err != nil {
		return err
	}
	return simulate(s)
}

// checkPhase checks phase i (from 0) of a spec in mode on its own, and
// fills in the outcome it expects when the spec leaves it out.
func (d specDoc) checkPhase(mode Mode, i int, p *Phase) error {
	if !contains(ops, p.Op) {
		return d.fail(p.Line, "phase %d: op %q: want one of %s", i+1, p.Op, strings.Join(ops, ", "))
	}
	allowed := loopBy
	if mode == Rounds {
		allowed = roundsBy
	}
	if !contains(allowed, p.By) {
		return d.fail(p.Line, "phase %d: by %q in mode %s: want one of %s", i+1, p.By, mode, strings.Join(allowed, ", "))
	}
	// The error phases exist to be refused; every other op changes the
	// registration state the later phases are checked against.
	natural := "ok"
	if p.Op == OpRegInvalid || p.Op == OpRegForeign {
		natural = "EINVAL"
	}
	switch {
	case p.Expect == "":
		p.Expect = natural
	case natural == "ok" && p.Expect != "ok":
		return d.fail(p.Line, "phase %d: %s must expect ok: the phases after it rely on its effect", i+1, p.Op)
	case p.Expect != "ok" && !IsErrnoName(p.Expect):
		return d.fail(p.Line, "phase %d: expect %q: want ok or an errno name such as EINVAL", i+1, p.Expect)
	}
	return nil
}

// checkQPsFitPhases checks the qps block against the mode and whether the
// threads create their QPs: who owns a QP decides who may touch it.
func (d specDoc) checkQPsFitPhases(s *Spec) error {
	if s.Mode == Rounds && s.QPs.Scope != Shared {
		return d.fail(d.line("qps", "scope"), "mode rounds needs qps.scope shared: rounds coordinate threads on the same QPs")
	}
	if s.Creates() && s.QPs.Holder {
		return d.fail(d.line("qps", "holder"), "qps.holder with a create phase: the threads create their QPs, there is nothing to hold")
	}
	if s.Mode == Loop && s.Creates() && s.QPs.Scope != PerThread {
		return d.fail(d.line("qps", "scope"), "mode loop with a create phase needs qps.scope per_thread: each thread works on the QPs it created")
	}
	return nil
}

// find is yamlstrict.Find, by the name storm.go knows it.
func find(n *yaml.Node, key string) *yaml.Node { return yamlstrict.Find(n, key) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
