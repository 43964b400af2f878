// Package errname names an errno as C does ("EINVAL"): the one spelling
// every message, report and workload spec of xrcbench uses. It imports
// nothing of the project, so verbs, device, conform and workloads share it
// without depending on each other.
package errname

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Name is the symbolic name of e ("EINVAL"), "success" for 0, or
// "errno N" for a number Linux does not name.
func Name(e syscall.Errno) string {
	if e == 0 {
		return "success"
	}
	// Linux's 95 is both; x/sys says ENOTSUP, the verbs man pages and
	// the kernel's XRC code say EOPNOTSUPP.
	if e == syscall.EOPNOTSUPP {
		return "EOPNOTSUPP"
	}
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}
