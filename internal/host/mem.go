package host

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
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

// MemSampleEvery is how often a worker samples its memory while its
// threads measure: once per interval, between 100 ms and 1 s. Reading
// smaps_rollup walks the process's page tables (about 0.1 ms for a
// worker), on a CPU a measured thread may want.
func MemSampleEvery(interval time.Duration) time.Duration {
	return max(100*time.Millisecond, min(interval, time.Second))
}

// MemSampler samples a worker's memory while its threads measure: from
// the start, every period, until the first thread stops measuring, when
// it takes its last sample, the end's. Read after the threads tear down,
// the figures would miss what they had mapped: a sim device's mapping
// (17.5 MB of a worker's 40.6 MB RSS at the default capacity) goes with
// the last thread's teardown.
type MemSampler struct {
	stop, done chan struct{}
	once       sync.Once
	mu         sync.Mutex
	rss, pss   int64 // the end's
	peakRSS    int64
	peakPSS    int64
}

func StartMemSampler(every time.Duration) *MemSampler {
	m := &MemSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-tick.C:
				m.sample(false)
			}
		}
	}()
	return m
}

// sample reads the memory now, the end's when end is set.
func (m *MemSampler) sample(end bool) {
	rss, pss, err := selfMemory()
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.peakRSS, m.peakPSS = max(m.peakRSS, rss), max(m.peakPSS, pss)
	if end {
		m.rss, m.pss = rss, pss
	}
}

// End takes the end's sample and stops sampling; only the first call
// counts.
func (m *MemSampler) End() {
	if m == nil {
		return
	}
	m.once.Do(func() {
		close(m.stop)
		<-m.done
		m.sample(true)
	})
}

// Result is the end's RSS and PSS and the peaks, KiB (0: unreadable).
func (m *MemSampler) Result() (rssKB, pssKB, peakRSSKB, peakPSSKB int64) {
	if m == nil {
		return 0, 0, 0, 0
	}
	m.End()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rss, m.pss, m.peakRSS, m.peakPSS
}
