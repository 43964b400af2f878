// Package runfolder is a run's folders on disk, apart from what goes in
// them: the run folder (--out), locked for the run's life, written in a
// temporary sibling and put in place at the end by one rename (Write),
// with what a killed run left settled by the next (the rules are at the
// top of outdir.go); Lock, which other long writers (qualify) take; and
// the run's private directory for the sim device and the shared files
// (OpenPrivDir), on a memory file system where one has room. The engine
// (bench) uses it; it knows nothing of the engine.
package runfolder
