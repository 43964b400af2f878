// Package host is what the engine reads about the machine it measures on,
// apart from the device: the CPUs the threads may run on and the order they
// take them in (--pin, NUMA-local first), the CPUs' setup the CPU check
// judges (governor, boost, busy SMT siblings), the real-time policy the run
// was started with, a process's memory, the limits no run starts under,
// the build's version, and the result's environment and bill of materials
// built from these and the provider's device info. It imports the layers
// below the engine (verbs, device, results, workloads), never bench.
package host
