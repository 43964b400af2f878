// Package workloads defines what a benchmark run does: the spec format
// (strict YAML), its validation, and the built-in workloads, which are
// embedded files in that same format.
//
// A spec names the QPs a run works on (shared by every thread or one set
// per thread, kept alive by a holder or not) and the phases of one pass.
// In mode "loop" every thread runs the phases on its own, as fast as it
// can; in mode "rounds" all threads of all processes run each phase
// together and a barrier separates the phases, so that who does what to
// which QP (creator, closer) is fixed by construction. Mode "storm"
// replays a parallel job's XRC wiring at start-up instead, from a storm
// block (see storm.go): no qps, no phases; the built-ins storm (the
// historical MPI wiring), gasnet and ofi-rxm are storms.
//
// The format, strictly decoded (an unknown key is an error with its line):
//
//	name: lifecycle            # no spaces or slashes
//	description: one line      # what `xrcbench list` shows
//	mode: rounds               # loop | rounds | storm (storm.go)
//	qps:
//	  scope: shared            # shared | per_thread (--qps each)
//	  holder: false            # a registrant outside the measured threads
//	                           # creates the QPs first and holds them
//	phases:                    # in order, one batch per thread each
//	  - op: create             # create | reg | unreg | unreg_last |
//	                           # reg_invalid | reg_foreign
//	    by: creator            # loop: each; rounds: all | creator | closer |
//	                           # all_but_creator | all_but_closer
//	    expect: ok             # ok, or an errno name; reg_invalid and
//	                           # reg_foreign default to EINVAL
//
// Parse checks the phase order by running it on a model of the XRC
// registration state for one to three threads: an unreg that would
// destroy a QP must be an unreg_last, every reg needs its unreg within the
// pass, and so on.
package workloads
