package verbs

import "time"

// TimerName names the clock every duration is measured with. All processes
// share it, so it also times the start deadline of a run.
const TimerName = "clock_monotonic"

// Now reads the clock RunBatch times with, in nanoseconds.
func Now() uint64 { return nowNS() }

// TimerOverhead measures the cost of one timer read as RunBatch chains
// them: the median over rounds of back-to-back reads. Every chained
// duration includes about this much of the clock itself.
func TimerOverhead() time.Duration { return time.Duration(timerOverheadNS()) }
