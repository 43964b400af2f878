package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// smapsRollup is the kernel's per-process memory summary.
var smapsRollup = "/proc/self/smaps_rollup"

// selfMemory reads the process's resident memory, KiB: RSS, which counts
// every shared page in full, and PSS, which divides each among the
// processes mapping it (a worker: 24 MB RSS, 11 MB PSS).
func selfMemory() (rssKB, pssKB int64, err error) {
	data, err := os.ReadFile(smapsRollup)
	if err != nil {
		return 0, 0, err
	}
	return parseRollup(data)
}

// ProcessMemory reads another process's RSS and PSS, KiB, as selfMemory
// reads this one's (a soak samples its workers with it).
func ProcessMemory(pid int) (rssKB, pssKB int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseRollup(data)
}

// ChildPIDs lists pid's child processes (a coordinator's workers), from
// each of its threads' /proc children list.
func ChildPIDs(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(w); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func parseRollup(data []byte) (rssKB, pssKB int64, err error) {
	var haveRSS, havePSS bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) != 3 || string(f[2]) != "kB" {
			continue
		}
		v, perr := strconv.ParseInt(string(f[1]), 10, 64)
		if perr != nil {
			continue
		}
		switch string(f[0]) {
		case "Rss:":
			rssKB, haveRSS = v, true
		case "Pss:":
			pssKB, havePSS = v, true
		}
	}
	if !haveRSS || !havePSS {
		return 0, 0, fmt.Errorf("%s: no Rss or Pss line", smapsRollup)
	}
	return rssKB, pssKB, nil
}
