package host

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// MinAddressSpace is the address-space limit (ulimit -v, prlimit --as)
// below which no run was seen to start: the Go runtime reserves about
// 1 GiB of address space at start and glibc a 64 MiB malloc arena per
// thread, most of it never touched, in the coordinator and in each worker
// alike. Measured with 1 process x 1 thread on the sim: none ran at
// 1.4-1.5 GiB (the coordinator's runtime aborted, or the device could not
// be mapped), all at 2 GiB. Below the floor the run is refused in one line;
// above it a worker that cannot start its threads says so in one line
// (bench's crashLine).
const MinAddressSpace = 3 << 29 // 1.5 GiB

// CheckAddressSpace refuses an address-space limit no run can start
// under: the failure would otherwise be the Go runtime's abort, with a
// register dump, in a worker or in this process. The command calls it
// first thing (before the runtime has reason to start threads it could
// not get); a run calls it again.
func CheckAddressSpace() error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &lim); err != nil || lim.Cur == unix.RLIM_INFINITY || lim.Cur >= MinAddressSpace {
		return nil
	}
	return fmt.Errorf("the address-space limit (ulimit -v, prlimit --as) is %d MiB: each xrcbench process reserves more than %d MiB of address space (the Go runtime's heap, a malloc arena per thread; most of it never touched): raise or lift the limit",
		lim.Cur>>20, MinAddressSpace>>20)
}

// MinProcesses is the process limit (ulimit -u, prlimit --nproc, which
// counts the user's threads) below which no run was seen to start: under
// it a non-root user's coordinator or worker cannot start the threads the
// Go runtime needs, and the runtime aborts with a dump of every goroutine.
// Measured as an otherwise idle user, 1 process x 1 thread on the sim:
// at 3-5 the coordinator's runtime aborted, at 8 and 12 a worker could
// not start, at 16 the run ran. Above it, a bigger run that cannot start
// its threads fails in one line (bench's crashHint names the limit).
const MinProcesses = 16

// CheckProcesses refuses a process limit no run can start under, as
// CheckAddressSpace refuses an address-space limit. The kernel does not
// hold root to it.
func CheckProcesses() error {
	var lim unix.Rlimit
	if unix.Getuid() == 0 || unix.Getrlimit(unix.RLIMIT_NPROC, &lim) != nil || lim.Cur == unix.RLIM_INFINITY || lim.Cur >= MinProcesses {
		return nil
	}
	return fmt.Errorf("the process limit (ulimit -u, prlimit --nproc) is %d: it counts threads, and xrcbench's coordinator and each worker start several (the Go runtime's, and one per --threads); no run starts under %d: raise or lift the limit",
		lim.Cur, MinProcesses)
}
