// Package leaks is what a run checks after each repetition: that no QP it
// made outlived it (on sim by inspecting the device, elsewhere by
// registering with every QP number the run created, which must fail, and
// on rdma by asking the device's own list, RDMA netlink, which numbers it
// still holds), and how long a storm's exit took to be reaped. Set is the
// record of the QP numbers a run's threads created, kept for it.
package leaks

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/xrcbench/xrcbench/internal/device"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// Holder is what the run's holder made and keeps: the QPs it created in
// the run's domain (Domain) and in the foreign one (ForeignDomain), which
// the probe tries with the threads'.
type Holder struct {
	Domain, ForeignDomain string
	Held, Foreign         []uint32
}

// List is qpns as StillListed and Probe take a set of them.
func List(qpns []uint32) func(func(uint32) error) error {
	return func(f func(uint32) error) error {
		for _, q := range qpns {
			if err := f(q); err != nil {
				return err
			}
		}
		return nil
	}
}

// Merge adds a repetition's check l to the run's acc (nil: none yet).
func Merge(acc, l *results.LeakCheck) *results.LeakCheck {
	if l == nil {
		return acc
	}
	if acc == nil {
		c := *l
		return &c
	}
	acc.Checked = acc.Checked && l.Checked
	acc.Leaked = append(acc.Leaked, l.Leaked...)
	if l.DestroysUnconfirmed != nil {
		n := *l.DestroysUnconfirmed
		if acc.DestroysUnconfirmed != nil {
			n += *acc.DestroysUnconfirmed
		}
		acc.DestroysUnconfirmed = &n
	}
	acc.UnconfirmedQPNs = append(acc.UnconfirmedQPNs, l.UnconfirmedQPNs...)
	if acc.DeviceList == "" {
		acc.DeviceList = l.DeviceList
	}
	if l.Detail != "" && l.Detail != acc.Detail {
		acc.Detail += "; " + l.Detail
	}
	return acc
}

// ProbesCreated says whether the leak check of provider needs the QP
// numbers the threads created: sim is inspected, null keeps no state.
func ProbesCreated(provider string) bool { return provider != "sim" && provider != "null" }

// Check verifies that no QP the repetition made outlived it: on sim
// by inspecting the device (after it reaped dead workers), elsewhere by
// registering, from a fresh registrant, with every QP number the run
// made, which must fail with EINVAL. complete says whether every worker
// reported (a worker that failed did not send the QPs it created).
func Check(vo verbs.Options, h Holder, created *Set, complete bool) *results.LeakCheck {
	switch vo.Provider {
	case "null":
		return &results.LeakCheck{Method: "none", Detail: "the null provider keeps no state"}
	case "sim":
		snap, err := verbs.InspectSim(vo.Sim.Dir)
		if err != nil {
			return &results.LeakCheck{Method: "sim_inspect", Detail: "inspection failed: " + err.Error()}
		}
		lc := &results.LeakCheck{Checked: true, Method: "sim_inspect"}
		for _, q := range snap.QPs {
			lc.Leaked = append(lc.Leaked, q.QPN)
		}
		if snap.Registrants > 0 {
			lc.Detail = fmt.Sprintf("%d registrant(s) still open", snap.Registrants)
		}
		return lc
	}
	return Probe(vo, h, created, complete)
}

// Probe is the reg probe: every QP number the holder or a thread
// created, not a sample, so "no QP leaked" means what it says.
func Probe(vo verbs.Options, h Holder, created *Set, complete bool) *results.LeakCheck {
	lc := &results.LeakCheck{Method: "reg_probe"}
	dev, err := verbs.Open(vo)
	if err != nil {
		lc.Detail = "probe registrant: " + err.Error()
		return lc
	}
	defer dev.Close()
	probed := 0
	probe := func(path string, each func(func(uint32) error) error) error {
		dom, err := dev.OpenDomain(path, false)
		if err != nil {
			return err
		}
		defer dom.Close()
		return each(func(q uint32) error {
			probed++
			err := dom.Reg(q)
			// EEXIST where the process is the registrant (MLNX_OFED's
			// legacy layer): this process still holds it, after a
			// holder's release that failed; alive, and its unreg is the
			// process's last.
			held := errors.Is(err, syscall.EEXIST) && dev.Info().Registrant == verbs.RegistrantProcess
			if err == nil || held {
				lc.Leaked = append(lc.Leaked, q)
				dom.Unreg(q) // the last registration: destroys what leaked
			} else if !errors.Is(err, syscall.EINVAL) {
				return err
			}
			return nil
		})
	}
	// The holder's QPs and the threads' share the domain; a set makes
	// each number probed once, in order.
	made := NewSet().Union(created)
	for _, q := range h.Held {
		made.Add(q)
	}
	byThreads := created.Len()
	if made.Len() > 0 {
		if err := probe(h.Domain, made.Each); err != nil {
			lc.Detail = "probe: " + err.Error()
			return lc
		}
	}
	if len(h.Foreign) > 0 {
		if err := probe(h.ForeignDomain, List(h.Foreign)); err != nil {
			lc.Detail = "probe: " + err.Error()
			return lc
		}
	}
	lc.Detail = fmt.Sprintf("probed %d QP number(s): every one the run created (%d by the holder, %d by the threads)",
		probed, len(h.Held)+len(h.Foreign), byThreads)
	if vo.Provider == "rdma" {
		// The holder's QPs, just released; the threads' were asked
		// before (bench's coordinator.releaseHolder), while the holder still
		// held the domain that keeps a QP whose destroy failed.
		listed, how, err := StillListed(dev.Info(), List(h.Held), List(h.Foreign))
		AddUnconfirmed(lc, listed, how, err)
	}
	if !complete {
		// What the failed workers' threads created is unknown here; the
		// kernel drops a dead process's registrations (S10), but that is
		// not checked.
		lc.Detail = fmt.Sprintf("probed %d QP number(s): the holder's and those of the workers that reported; the QPs created by the workers that failed are unknown", probed)
		return lc
	}
	lc.Checked = true
	return lc
}

// StillListed asks the device itself which of the QP numbers sets give
// it still lists, once all of them were destroyed: ibv_destroy_qp of a
// shared QP's last handle returns 0 even when the hardware destroy failed
// (the kernel keeps the QP with its XRCD), so only the device's own list
// (RDMA netlink) can say a destruction did not happen.
func StillListed(info verbs.DeviceInfo, sets ...func(func(uint32) error) error) (listed []uint32, how string, err error) {
	qpns, how, err := device.DeviceQPs(info)
	if err != nil {
		return nil, "", err
	}
	for _, each := range sets {
		each(func(q uint32) error {
			if qpns[q] {
				listed = append(listed, q)
			}
			return nil
		})
	}
	return listed, how, nil
}

// AddUnconfirmed records in lc what StillListed said.
func AddUnconfirmed(lc *results.LeakCheck, listed []uint32, how string, err error) {
	if err != nil {
		lc.DeviceList, lc.DestroysUnconfirmed = "n/a: "+err.Error(), nil
		return
	}
	if strings.HasPrefix(lc.DeviceList, "n/a") {
		return // one answer missing: nothing is confirmed
	}
	lc.DeviceList = how
	lc.UnconfirmedQPNs = append(lc.UnconfirmedQPNs, listed...)
	n := len(lc.UnconfirmedQPNs)
	lc.DestroysUnconfirmed = &n
}

// ExitTeardown times a storm's teardown exit: from the last rank's
// exit (exited, seen at ns) until the device (named name, the one the
// run opened) lists none of the job's QPs (created: every QP number the
// ranks created). The sim device drops a dead process's handles when it
// is next opened, as the kernel does when the process ends, so this times
// that reaping and one inspection. rdma and legacy ask the kernel's RDMA
// netlink for the device's QPs (device.LiveQPs), where it has one.
func ExitTeardown(vo verbs.Options, name string, created *Set, exited uint64) (int64, string) {
	var left func() (int, error)
	switch ExitMethod(vo.Provider) {
	case "sim_inspect":
		left = func() (int, error) {
			snap, err := verbs.InspectSim(vo.Sim.Dir)
			if err != nil {
				return 0, fmt.Errorf("inspecting the sim device: %w", err)
			}
			return len(snap.QPs), nil
		}
	case "netlink":
		if created.Len() == 0 {
			return -1, "not measurable here: the ranks reported no QP they created"
		}
		left = func() (int, error) {
			qps, err := device.LiveQPs(name)
			return jobQPsLeft(qps, created), err
		}
	default:
		return -1, fmt.Sprintf("not measurable here: the %s provider cannot count the device's live QPs", vo.Provider)
	}
	until := time.Now().Add(30 * time.Second)
	for {
		n, err := left()
		var ne *device.NetlinkError
		switch {
		case errors.As(err, &ne):
			return -1, "not measurable here: " + ne.Reason
		case err != nil:
			return -1, "not measured: " + err.Error()
		case n == 0:
			return int64(verbs.Now() - exited), ""
		case time.Now().After(until):
			return -1, fmt.Sprintf("not measured: %d QP(s) still alive 30s after the ranks exited", n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// jobQPsLeft counts the listed QPs that are the job's: their numbers are
// among those the ranks created. The kernel frees a number with its QP,
// so a number listed again later is a new QP only if something else made
// one meanwhile; the 30s bound keeps that from hanging the run.
func jobQPsLeft(listed []device.LiveQP, created *Set) int {
	n := 0
	for _, q := range listed {
		if created.Has(q.QPN) {
			n++
		}
	}
	return n
}

// ExitMethod names how ExitTeardown watches a provider's
// device (result.json's storm.teardown_method); "" where it cannot.
func ExitMethod(provider string) string {
	switch provider {
	case "sim":
		return "sim_inspect"
	case "rdma", "legacy":
		return "netlink"
	}
	return ""
}
