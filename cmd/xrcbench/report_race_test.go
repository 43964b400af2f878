package main

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// report racing runs into one folder: reports run one after another while
// runs replace the folder's run, all real processes. A report takes the
// folder's lock, so it writes into the folder that holds the run it read
// or refuses (exit 2, one line); a run refused for a report's lock is run
// again. Before, a report wrote the run it had read into the folder of the
// run that had replaced it meanwhile, or into the earlier folder being
// swapped out: another run's report.html and plots stayed in the folder
// for good, listed for no run, and a .kept- folder beside it.
func TestReportRacingRuns(t *testing.T) {
	judgesNoTime(t)
	bin := engineBinary(t)
	parent := t.TempDir()
	out := filepath.Join(parent, "run")
	const runs = 12
	run := func() (int, string) {
		code, _, stderr := runProcess(exec.Command(bin, "run", "--provider", "null", "--workload", "steady", "--qps", "2",
			"--iterations", "20", "--warmup", "0s", "--out", out))
		return code, stderr
	}
	if code, stderr := run(); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	// A report of a folder no run races gets through; how long it took
	// paces the runs below, so that on a loaded machine too some pauses
	// leave a report the time to get through.
	began := time.Now()
	if code, _, stderr := runProcess(exec.Command(bin, "report", out)); code != 0 {
		t.Fatalf("report of a quiet folder: exit %d\n%s", code, stderr)
	}
	pause := 2 * time.Since(began)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	outcomes := map[string]int{}
	var bad []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			code, _, stderr := runProcess(exec.Command(bin, "report", out))
			switch {
			case code == 0:
				outcomes["reported"]++
			case code == 2 && strings.Count(stderr, "\n") == 1 && strings.Contains(stderr, "is writing it"):
				outcomes["refused: a run was writing"]++
			case code == 2 && strings.Count(stderr, "\n") == 1 && strings.Contains(stderr, "was replaced while the report was made"):
				outcomes["refused: the run was replaced"]++
			default:
				bad = append(bad, stderr)
			}
		}
	}()
	refusedRuns := 0
	for done := 0; done < runs; {
		// Now and then long enough apart for a report to get through,
		// else at once: a run commits over a report at any point of it.
		time.Sleep(time.Duration(rand.IntN(2)) * pause)
		code, stderr := run()
		switch {
		case code == 0:
			done++
		case code == 2 && strings.Contains(stderr, "another xrcbench is writing it"):
			refusedRuns++ // a report held the lock: again
		default:
			close(stop)
			wg.Wait()
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("reports: %v; runs refused for a report's lock: %d", outcomes, refusedRuns)
	if len(bad) > 0 {
		t.Fatalf("reports that failed otherwise:\n%s", strings.Join(bad, "\n"))
	}
	if outcomes["reported"] == 0 {
		t.Fatalf("no report got through: %v", outcomes)
	}
	// The last run replaced whatever the reports left: the folder holds
	// that run's files, its summaries, and nothing of another run's.
	if code, stderr := run(); code != 0 {
		t.Fatalf("last run: exit %d\n%s", code, stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	listed := slices.Concat(r.Files, []string{results.FileName, results.ReportManifest})
	if m, err := results.LoadManifest(out); err == nil {
		if m.RunID != r.RunID {
			t.Errorf("the report record names run %s in the folder of run %s", m.RunID, r.RunID)
		}
		listed = append(listed, m.Files...)
	}
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(out, path)
		if err == nil && !d.IsDir() && !slices.Contains(listed, rel) {
			t.Errorf("%s is in the folder of run %s, listed for no run of it", rel, r.RunID)
		}
		return nil
	})
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("beside the run folder: %v, want nothing", names)
	}
}
