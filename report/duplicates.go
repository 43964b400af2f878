package report

import (
	"fmt"
	"path/filepath"
	"strings"
)

// A run given twice is one measurement counted twice: compare of a run
// with itself finds no change whatever the code did, a history weighs
// that run double, a fleet shows one node twice. These find such input.

// DuplicateRuns says, one line per run given more than once, which
// folders hold it: the same run id (a folder given twice, or a copy of
// it), or for a result without one, the same folder.
func DuplicateRuns(runs []*Run) []string {
	var dirs, ids []string
	for _, r := range runs {
		dirs, ids = append(dirs, r.Dir), append(ids, r.Result.RunID)
	}
	return DuplicateFolders(dirs, ids)
}

// DuplicateFolders is DuplicateRuns of runs read elsewhere: their folders
// dirs and run ids ids, in one order.
func DuplicateFolders(dirs, ids []string) []string {
	var order []string
	where := map[string][]string{}
	for i, d := range dirs {
		key := "run id " + ids[i]
		if ids[i] == "" {
			abs, err := filepath.Abs(d)
			if err != nil {
				abs = d
			}
			key = "folder " + abs
		}
		if where[key] == nil {
			order = append(order, key)
		}
		where[key] = append(where[key], d)
	}
	var lines []string
	for _, key := range order {
		if n := len(where[key]); n > 1 {
			lines = append(lines, fmt.Sprintf("the same run (%s) is given %d times: %s; it counts as %d runs, but it is one measurement",
				key, n, strings.Join(where[key], ", "), n))
		}
	}
	return lines
}
