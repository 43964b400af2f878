// Package conform checks a provider against the XRC semantics S1–S15 of
// docs/design.md, one check at a time (Conform, behind `xrcbench
// conform` and a qualification's conformance step): each check opens its
// own device and domains through verbs, does the operations of its row
// and says pass, fail, skip (with why) or self-test (the sim checking a
// behaviour it was configured to have, which is no evidence).
//
// Its one concern is the semantics table; it measures nothing. S10 needs
// a process that dies while registered: verbs.KillRegistrant re-executes
// the program as one, so main and TestMain call verbs.MaybeRunChild first.
package conform
