package results

// Limits on how a measurement was taken, beyond which the engine and the
// report warn. They are judgement calls, shared so that every place that
// warns says the same.
const (
	// StartSkewShare: a repetition's start skew (the spread of its
	// threads' start times) relative to its duration. Above 1% some
	// threads ran measurably alone at the start or end.
	StartSkewShare = 0.01
	// DurationDeparture: how far a repetition's measured length may
	// depart from the requested --duration. Beyond 5% the threads did
	// not run the time asked (late starts, a last round that overran,
	// a stall), and ops/s and per-interval figures cover another span.
	DurationDeparture = 0.05
)

// MaxFleetNodes is the most nodes a fleet run (run --fleet) may have, as
// the launcher states them (SLURM_NNODES, SLURM_JOB_NODELIST,
// OMPI_COMM_WORLD_SIZE). A node's result records the job's node list and
// every node's clock offset, so this bounds result.json too: a fleet this
// big, with names of 255 characters, writes about 35 MiB, well within the
// result.json xrcbench reads.
const MaxFleetNodes = 65536
