package qualify

// What a release attachment needs beside the verdicts: the bill of
// materials of the runs (results.BOM) and the plan as it was run, with
// its real durations and repetitions, shown in qualification.html.

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"time"
)

// PlanAsRun is the plan with every count and length as run: a plan file
// that keeps the default's name but shortens it must not read as the
// default.
type PlanAsRun struct {
	// Origin says where the plan came from and whether it is the
	// embedded default's text.
	Origin      string       `json:"origin"`
	Repetitions int          `json:"repetitions"` // the plan's; a run may set its own
	Warmup      string       `json:"warmup"`
	Runs        []PlanRunRun `json:"runs"`
	Soak        string       `json:"soak"` // its length, "none" without
}

// PlanRunRun is one run of the battery as configured here (cpus resolved).
type PlanRunRun struct {
	Name        string `json:"name"`
	Workload    string `json:"workload"`
	Procs       int    `json:"procs"`
	Threads     int    `json:"threads"`
	QPs         int    `json:"qps"`
	Repetitions int    `json:"repetitions"`
	Length      string `json:"length"` // "10s per repetition" or "100000 iterations"
	// Scaled says the processes and threads were scaled down to fit this
	// machine's CPUs, from what (RunStep.Fit); "" as asked.
	Scaled string `json:"scaled,omitempty"`
}

// planAsRun is the plan o runs, resolved on this machine.
func planAsRun(o Options) *PlanAsRun {
	p := o.Plan
	pr := &PlanAsRun{Origin: planOrigin(p), Repetitions: p.Repetitions, Warmup: time.Duration(p.Warmup).String(), Soak: "none"}
	// The command line's overrides replace the plan's figures in every
	// run: the plan as run has theirs, and says so.
	if v := o.Overrides; !v.none() {
		var said []string
		if v.Duration != nil {
			said = append(said, "--duration "+v.Duration.D().String())
		}
		if v.Repetitions > 0 {
			pr.Repetitions = v.Repetitions
			said = append(said, fmt.Sprintf("--repetitions %d", v.Repetitions))
		}
		if v.Warmup != nil {
			pr.Warmup = v.Warmup.D().String()
			said = append(said, "--warmup "+pr.Warmup)
		}
		pr.Origin += ", with " + strings.Join(said, ", ") + " replacing the plan's"
	}
	if d := o.soakDuration(); d > 0 {
		pr.Soak = d.String()
	}
	cpus := AllowedCPUs()
	for _, s := range p.Runs {
		r := PlanRunRun{Name: s.Name, Workload: s.Workload, QPs: s.QPs}
		_, _, r.Scaled = s.Fit(cpus)
		if cfg, err := stepConfig(o, p, s, cpus); err == nil {
			r.Procs, r.Threads, r.Repetitions = cfg.Procs, cfg.Threads, cfg.Repetitions
			if cfg.Iterations > 0 {
				r.Length = fmt.Sprintf("%d iterations", cfg.Iterations)
			} else {
				r.Length = cfg.Duration.String() + " per repetition"
			}
		}
		pr.Runs = append(pr.Runs, r)
	}
	return pr
}

// planOrigin names the plan and whether it is the embedded default.
func planOrigin(p *Plan) string {
	switch {
	case p.File == "":
		return fmt.Sprintf("%s (the embedded default plan)", p.Name)
	case bytes.Equal([]byte(p.Source), defaultPlan):
		return fmt.Sprintf("%s from %s (the embedded default plan's text)", p.Name, p.File)
	}
	def, err := ParsePlan(defaultPlan, "")
	if err == nil && def.Name == p.Name {
		return fmt.Sprintf("%s from %s, changed from the embedded default of that name", p.Name, p.File)
	}
	return fmt.Sprintf("%s from %s", p.Name, p.File)
}

// The page's bill of materials and plan as run (output.go's page calls it).
var _ = template.Must(pageTmpl.New("bom").Parse(`<h2>Bill of materials</h2>
{{with .BOM}}<table>
{{range .BOMRows}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}
</table>{{else}}<p>Not recorded: no run of this qualification measured (or its results predate it).</p>{{end}}
{{with .PlanAsRun}}<h2>Plan as run</h2>
<p>{{.Origin}}: warm-up {{.Warmup}}, soak {{.Soak}}.</p>
<table><tr><th>run</th><th>workload</th><th>processes × threads</th><th>QPs</th><th>repetitions</th><th>length</th></tr>
{{range .Runs}}<tr><td>{{.Name}}</td><td>{{.Workload}}</td><td>{{.Procs}} × {{.Threads}}{{with .Scaled}} ({{.}}){{end}}</td><td>{{.QPs}}</td><td>{{.Repetitions}}</td><td>{{.Length}}</td></tr>
{{end}}</table>{{end}}
`))
