package report

import (
	"fmt"

	"github.com/xrcbench/xrcbench/results"
)

// waitsText says what the measured threads' working time went to besides
// their own work: the device's locks and command queue (the device's
// doing) and the run queue (the machine's), so a reader can tell a device
// that serializes from a busy machine.
func waitsText(w *results.Waits) string {
	runq := "not known (schedstat unreadable)"
	if w.RunQueueShare != nil {
		runq = fmt.Sprintf("%.1f%%", 100**w.RunQueueShare)
	}
	return fmt.Sprintf("on the device's locks %.1f%%, for its command queue %.1f%%, on the run queue (runnable, not running) %s",
		100*w.DeviceLockShare, 100*w.CommandQueueShare, runq)
}
