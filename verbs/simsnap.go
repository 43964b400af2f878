package verbs

// What InspectSim reports of a sim device, in every build (cgo_sim.go
// reads it from sim.c; nocgo.go has no device to read).

// SimQP is one live QP of a sim device.
type SimQP struct {
	QPN         uint32
	Domain      int // slot of its domain in the device
	Registrants int // registrant entries
	Handles     int // registrations counted as upstream handles
}

// SimSnapshot is the state of a sim device.
type SimSnapshot struct {
	QPs         []SimQP
	Registrants int // open device contexts
	Domains     int // live domains
}
