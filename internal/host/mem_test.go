package host

import "testing"

// PSS comes from smaps_rollup beside RSS: the kernel's own lines are read,
// a file without them is an error, not zeros.
func TestParseRollup(t *testing.T) {
	const rollup = `55d0c8a00000-7ffd5b3f3000 ---p 00000000 00:00 0                          [rollup]
Rss:               24576 kB
Pss:               11437 kB
Pss_Dirty:          6000 kB
Pss_Anon:           5000 kB
Shared_Clean:      13000 kB
`
	rss, pss, err := parseRollup([]byte(rollup))
	if err != nil || rss != 24576 || pss != 11437 {
		t.Errorf("parseRollup = %d, %d, %v; want 24576, 11437", rss, pss, err)
	}
	if _, _, err := parseRollup([]byte("Rss: 10 kB\n")); err == nil {
		t.Error("a rollup without Pss parsed")
	}
	// This process: PSS is at most RSS, both positive.
	rss, pss, err = selfMemory()
	if err != nil {
		t.Skipf("no smaps_rollup here: %v", err)
	}
	if rss <= 0 || pss <= 0 || pss > rss {
		t.Errorf("this process: RSS %d KiB, PSS %d KiB", rss, pss)
	}
}
