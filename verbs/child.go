package verbs

// MaybeRunChild runs the child side of a multi-process conformance check
// when this process was started as one, and exits; otherwise it returns.
// Call it first thing in main and TestMain.
func MaybeRunChild() {}
