// Package calibrate is xrcbench calibrate: the harness's own costs on this
// machine, measured and held to their targets. The figures of the
// providers' loops (the timer, the null op, the cgo calls, the sim pair
// and the sim's destroy cost) are measured by verbs, which alone reaches
// the providers; the engine's hot path (ops per CPU-second against a bare
// loop, p50 against a timer read, coverage, 1 QP against 16) by one engine
// thread on a fresh device, bench's Rig. What each figure is held to, and
// when a machine is too busy to judge one, is this package's alone: the
// engine only measures.
package calibrate
