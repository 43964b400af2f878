// Package bench is the engine of xrcbench: the coordinator that starts
// worker processes (its own binary, re-executed), the worker threads that
// run a workload on one registrant each, the shared-memory barrier between
// them, and the assembly of their histograms into a results.Result.
//
// Its one concern is running a benchmark: a Config (the one builder of
// it is Settings, which the run and sweep commands and qualify share), a run
// folder written through results, a sweep of such runs (Sweep). It opens
// devices only through verbs, and asks device for what surrounds them
// (the kernel's live QPs); internal/host reads the machine (CPUs,
// placement, memory, the bill of materials), internal/runfolder locks,
// commits and recovers the run folder and makes the private directory,
// and a fleet node's identity and barrier are internal/fleet's, which the
// CLI hands to a run.
package bench
