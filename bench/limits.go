package bench

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// crashLine says whether line begins the Go runtime's report of a fatal
// error (it cannot start a thread, is out of memory, a fatal signal),
// which a dump of every goroutine and the registers follows.
func crashLine(line string) bool {
	for _, p := range []string{"runtime/cgo: ", "fatal error: ", "runtime: ", "SIGABRT: ", "SIGSEGV: ", "SIGBUS: "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// crashHint is what a crash line suggests of its cause: a limit, when the
// runtime could not get threads or memory.
func crashHint(line string) string {
	for _, s := range []string{"pthread_create failed", "failed to create new OS thread", "out of memory", "cannot allocate memory"} {
		if strings.Contains(line, s) {
			var lim unix.Rlimit
			as := "none"
			if unix.Getrlimit(unix.RLIMIT_AS, &lim) == nil && lim.Cur != unix.RLIM_INFINITY {
				as = fmt.Sprintf("%d MiB", lim.Cur>>20)
			}
			return fmt.Sprintf(" (could not start its threads or get memory: check the limits on address space, ulimit -v: %s, and on processes, ulimit -u)", as)
		}
	}
	return ""
}
