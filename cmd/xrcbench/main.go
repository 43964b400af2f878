// Command xrcbench measures what XRC receive-QP registration costs on RDMA
// adapters. See README.md and `xrcbench --help`.
package main

import (
	"os"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/verbs"
)

func main() {
	// A re-executed child of `conform` runs its part and exits here.
	verbs.MaybeRunChild()
	refuseLimits(os.Args[1:])
	os.Exit(run(os.Stdout, os.Stderr, os.Args[1:]))
}

// refuseLimits ends the process, exit 1, when a measuring command meets
// an address-space limit (host.MinAddressSpace) or a process limit
// (host.MinProcesses) no run starts under.
// It is said here, before anything else, and written and ended with raw
// system calls: under such a limit the Go runtime cannot get the threads it
// starts for itself, and a line printed the ordinary way (a system call the
// scheduler may hand the processor off during, starting a thread) was once
// followed by the runtime's abort and its register dump.
func refuseLimits(args []string) {
	i := slices.IndexFunc(args, func(a string) bool { return len(a) > 0 && a[0] != '-' })
	if i < 0 || !measuring[args[i]] {
		return
	}
	err := host.CheckAddressSpace()
	if err == nil {
		err = host.CheckProcesses()
	}
	if err != nil {
		line := []byte("xrcbench: " + err.Error() + "\n")
		unix.RawSyscall(unix.SYS_WRITE, 2, uintptr(unsafe.Pointer(&line[0])), uintptr(len(line)))
		unix.Exit(exitFailed)
	}
}
