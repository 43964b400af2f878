package conform

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/device"
	"github.com/xrcbench/xrcbench/verbs"
)

// Check is the outcome of one conformance check.
type Check struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// "pass", "fail", "skip", or "self-test": it passed, but by
	// construction (the sim checking a behaviour it was configured to
	// have), so it is not evidence that the provider conforms.
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// ConformReport is the outcome of Conform.
type ConformReport struct {
	Provider  string  `json:"provider"`
	Device    string  `json:"device"`
	Semantics string  `json:"semantics"`
	Checks    []Check `json:"checks"`
	// Destructions says how the rdma provider's destructions were
	// confirmed: after every last unreg a check expects to destroy, the
	// QP number must be gone from the device's own list (RDMA netlink),
	// since ibv_destroy_qp of a shared QP's last handle returns 0 even
	// when the hardware destroy failed. "n/a: why" where the device
	// cannot be asked; absent for other providers.
	Destructions string `json:"destructions,omitempty"`
	// NoOpenQP says why the device's provider cannot share a QP (it has
	// XRC domains but no ibv_open_qp); every check that needs it is then
	// skipped with CannotRunNoOpenQP. Empty otherwise.
	NoOpenQP string `json:"no_open_qp,omitempty"`
}

// Failed reports whether any check failed.
func (r ConformReport) Failed() bool {
	for _, c := range r.Checks {
		if c.Status == CheckFail {
			return true
		}
	}
	return false
}

// Check statuses.
const (
	CheckPass     = "pass"
	CheckFail     = "fail"
	CheckSkip     = "skip"
	CheckSelfTest = "self-test"
)

// selfTest marks a check that passed by construction, with why.
type selfTest string

// Evidence reports whether the check says something about the provider:
// it ran and did not merely confirm its own configuration.
func (c Check) Evidence() bool { return c.Status == CheckPass || c.Status == CheckFail }

// skipError marks a check the provider cannot do, with the reason.
type skipError string

func (s skipError) Error() string { return string(s) }

func (s selfTest) Error() string { return string(s) }

// conformCheck is one row of the XRC semantics table of docs/design.md:
// S1–S11 registration, S12–S15 the QP state transitions of the kernel's
// qp_state_table for an XRC_TGT QP that the benchmark makes (--qp-state).
type conformCheck struct {
	id, name string
	run      func(c *conformer) (detail string, err error)
	// withoutOpenQP: the check runs on a device whose provider has no
	// ibv_open_qp (S1 creates and destroys; S11 opens another device).
	withoutOpenQP bool
}

// CannotRunNoOpenQP is the detail of every check a device whose provider
// has XRC domains but no ibv_open_qp cannot run: each needs a second
// registrant of a QP, or a probe of whether one is alive, and both are an
// ibv_open_qp.
const CannotRunNoOpenQP = "cannot run: the provider has XRC domains but no ibv_open_qp (it fails EOPNOTSUPP), " +
	"so no second registrant can open a QP, nor can a QP be probed alive"

// conformChecks is the table S1–S15. Each check uses fresh registrants and
// a fresh domain file, so checks do not depend on each other.
var conformChecks = []conformCheck{
	{"S1", "create registers the creator implicitly", checkCreateRegisters, true},
	{"S2", "reg adds a registrant", checkRegAdds, false},
	{"S3", "reg again from the same registrant", checkRegAgain, false},
	{"S4", "unreg removes a registrant", checkUnregRemoves, false},
	{"S5", "last unreg destroys the QP", checkLastUnregDestroys, false},
	{"S6", "reg of an unknown QP number", checkRegUnknown, false},
	{"S7", "reg of a QP of another domain", checkRegForeign, false},
	{"S8", "unreg by a registrant that is not registered", checkUnregNotRegistered, false},
	{"S9", "close the domain while registered", checkCloseBusy, false},
	{"S10", "a process exits without unregistering", checkProcessExit, false},
	{"S11", "a device without XRC", checkNoXRC, true},
	{"S12", "modify RESET to RTR, skipping INIT", checkRTRWithoutInit, false},
	{"S13", "modify INIT to RTR, then back to INIT", checkRTRBackToInit, false},
	{"S14", "a registrant's modify moves the shared QP", checkModifyShared, false},
	{"S15", "last unreg destroys a QP in RTR", checkDestroyFromRTR, false},
}

// Conform runs the checks S1–S15 against the provider opts names, keeping
// its domain files (and, for sim without a Dir, its device) in workDir.
// Checks that need other processes re-execute this program: main (and
// TestMain) must call verbs.MaybeRunChild first.
func Conform(opts verbs.Options, workDir string) (ConformReport, error) {
	if opts.Provider == "" {
		opts.Provider = "sim"
	}
	if opts.Provider == "sim" && opts.Sim.Dir == "" {
		opts.Sim.Dir = filepath.Join(workDir, "sim")
	}
	probe, err := verbs.Open(opts)
	noOpenQP := ""
	if errors.Is(err, verbs.ErrNoOpenQP) && opts.Provider == "rdma" {
		// qedr: XRC domains, creates and destroys, but no ibv_open_qp.
		// What needs no second registrant (S1) is still checked; the
		// rest cannot run, and each check says why.
		opts.AllowNoOpenQP = true
		probe, err = verbs.Open(opts)
		noOpenQP = "the provider has XRC domains but no ibv_open_qp"
	}
	if err != nil {
		return ConformReport{}, err
	}
	info := probe.Info()
	probe.Close()
	if noOpenQP != "" {
		noOpenQP = fmt.Sprintf("device %s (driver %s) has XRC domains, but its rdma-core provider does not implement ibv_open_qp "+
			"(EOPNOTSUPP): no QP can be shared, so every check but S1 and S11 cannot run, and run refuses the device",
			info.Name, orUnknown(info.Driver))
	}
	rep := ConformReport{Provider: opts.Provider, Device: info.Name, Semantics: info.Semantics, NoOpenQP: noOpenQP}
	c := &conformer{opts: opts, dir: workDir, info: info, upstream: info.Semantics == string(verbs.Upstream),
		mlnx: info.Semantics == string(verbs.LegacyMlnx), noOpenQP: noOpenQP != ""}
	for _, chk := range conformChecks {
		c.domainSeq++
		detail, err := func() (string, error) {
			defer c.closeAll()
			if info.Semantics == string(verbs.NoSemantics) {
				return "", skipError(fmt.Sprintf("provider %s keeps no state by design (it measures the harness's own overhead)", opts.Provider))
			}
			if !info.XRC && chk.id != "S11" {
				return "", skipError(fmt.Sprintf("device %s lacks XRC", info.Name))
			}
			if c.noOpenQP && !chk.withoutOpenQP {
				return "", skipError(CannotRunNoOpenQP)
			}
			return chk.run(c)
		}()
		res := Check{ID: chk.id, Name: chk.name, Status: CheckPass, Detail: detail}
		var skip skipError
		var self selfTest
		switch {
		case errors.As(err, &skip):
			res.Status, res.Detail = CheckSkip, string(skip)
		case errors.As(err, &self):
			res.Status, res.Detail = CheckSelfTest, string(self)
		case err != nil:
			res.Status, res.Detail = CheckFail, err.Error()
		}
		rep.Checks = append(rep.Checks, res)
	}
	if opts.Provider == "rdma" && info.XRC {
		switch {
		case c.unconfirmable != "":
			rep.Destructions = "n/a: " + c.unconfirmable + "; a destruction the kernel does not report (ibv_destroy_qp returns 0) cannot be caught here"
		case c.confirmed > 0:
			rep.Destructions = fmt.Sprintf("%d destruction(s) confirmed through %s: each QP number gone from the device after its last unreg", c.confirmed, c.listedBy)
		}
	}
	return rep, nil
}

// conformer holds what one run of the checks shares.
type conformer struct {
	opts     verbs.Options
	dir      string
	info     verbs.DeviceInfo
	upstream bool
	// mlnx: MLNX_OFED's legacy calls, where the process is the
	// registrant: a second registrant in this process is no registrant,
	// so where a check needs one it is a child process (heldByChild).
	mlnx bool
	// noOpenQP: the provider has no ibv_open_qp; a QP is known gone only
	// from the device's own list (wantGone), never probed by a reg.
	noOpenQP  bool
	domainSeq int
	open      []*verbs.Domain
	// The rdma provider's destructions confirmed through the device's
	// own list (DeviceQPs), or why it cannot be asked.
	confirmed     int
	listedBy      string
	unconfirmable string
}

// wantGone confirms, on the rdma provider, that the device itself no
// longer lists qpn after an unreg that reported its destruction.
func (c *conformer) wantGone(step string, qpn uint32) error {
	if c.opts.Provider != "rdma" || c.unconfirmable != "" {
		return nil
	}
	qpns, how, err := device.DeviceQPs(c.info)
	if err != nil {
		c.unconfirmable = err.Error()
		return nil
	}
	if qpns[qpn] {
		return fmt.Errorf("%s: the unreg returned 0, but %s still lists qp %#06x on %s: a destruction the kernel did not report",
			step, how, qpn, c.info.Name)
	}
	c.confirmed++
	c.listedBy = how
	return nil
}

// registrant opens a new device context on the check's domain (or on the
// domain with suffix sfx, for S7).
func (c *conformer) registrant(sfx string) (*verbs.Domain, error) {
	dev, err := verbs.Open(c.opts)
	if err != nil {
		return nil, err
	}
	dom, err := dev.OpenDomain(c.domainPath(sfx), true)
	if err != nil {
		dev.Close()
		return nil, err
	}
	c.open = append(c.open, dom)
	return dom, nil
}

// created opens n registrants on the check's domain and has the first
// create a QP: the set-up most checks start from.
func (c *conformer) created(n int) ([]*verbs.Domain, uint32, error) {
	var regs []*verbs.Domain
	for range n {
		r, err := c.registrant("")
		if err != nil {
			return nil, 0, err
		}
		regs = append(regs, r)
	}
	q, err := regs[0].CreateRcvQP()
	return regs, q, err
}

func (c *conformer) domainPath(sfx string) string {
	return filepath.Join(c.dir, fmt.Sprintf("domain-%d%s", c.domainSeq, sfx))
}

// closeAll releases every registrant the check opened: what it still
// holds is dropped by closing the device, as process exit would.
func (c *conformer) closeAll() {
	for _, d := range c.open {
		if d.Close() != nil {
			// Registrations remain: giving the device up drops them.
			d.Device().Abandon()
		}
		d.Device().Close()
	}
	c.open = nil
}

// heldByChild starts a child process registered on qpn in the check's
// domain and returns its kill: on MLNX_OFED the registrant that keeps a
// QP alive besides this process must be another process.
func (c *conformer) heldByChild(qpn uint32) (func() error, error) {
	ch, err := verbs.StartRegistrant(c.opts, c.domainPath(""), qpn)
	if err != nil {
		return nil, fmt.Errorf("child registrant: %w", err)
	}
	return ch.Kill, nil
}

// want checks that err carries errno want (0: success), naming the step.
func want(step string, err error, want syscall.Errno) error {
	var got syscall.Errno
	if err != nil && !errors.As(err, &got) {
		return fmt.Errorf("%s: %v (want %s)", step, err, errnoName(want))
	}
	if got != want {
		return fmt.Errorf("%s: got %s, want %s", step, errnoName(got), errnoName(want))
	}
	return nil
}

// wantDestroyed checks an unreg's destroy flag when the provider knows it.
func wantDestroyed(step string, got, want verbs.Destroyed) error {
	if got == verbs.DestroyUnknown || got == want {
		return nil
	}
	return fmt.Errorf("%s: the QP was %s, want %s", step, got, want)
}

// alive probes whether qpn still exists with a fresh registrant: reg
// succeeds (and is undone) on a live QP, fails EINVAL on a dead one.
func (c *conformer) alive(qpn uint32) (bool, error) {
	p, err := c.registrant("")
	if err != nil {
		return false, err
	}
	err = p.Reg(qpn)
	if errors.Is(err, syscall.EINVAL) {
		return false, nil
	}
	if c.mlnx && errors.Is(err, syscall.EEXIST) {
		return true, nil // this process holds it
	}
	if err != nil {
		return false, err
	}
	_, err = p.Unreg(qpn)
	return true, err
}

func (c *conformer) wantAlive(step string, qpn uint32, want bool) error {
	if !want {
		if err := c.wantGone(step, qpn); err != nil {
			return err
		}
	}
	if c.noOpenQP {
		// A probe would be an ibv_open_qp: only the device's own list
		// can say the QP is gone.
		switch {
		case want:
			return skipError(CannotRunNoOpenQP)
		case c.unconfirmable != "":
			return skipError(CannotRunNoOpenQP + "; and the device's own QP list cannot be read to see the QP gone: " + c.unconfirmable)
		}
		return nil
	}
	got, err := c.alive(qpn)
	if err != nil {
		return fmt.Errorf("%s: probing qp %#06x: %v", step, qpn, err)
	}
	if got != want {
		state := map[bool]string{true: "alive", false: "destroyed"}
		return fmt.Errorf("%s: qp %#06x is %s, want %s", step, qpn, state[got], state[want])
	}
	return nil
}

// steps runs checks in order and stops at the first failure.
func steps(fs ...func() error) error {
	for _, f := range fs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

func checkCreateRegisters(c *conformer) (string, error) {
	r, q, err := c.created(1)
	if err != nil {
		return "", err
	}
	a := r[0]
	var d verbs.Destroyed
	return "creator's unreg succeeds and destroys the QP", steps(
		func() error { d, err = a.Unreg(q); return want("creator unreg", err, 0) },
		func() error { return wantDestroyed("creator unreg", d, verbs.WasDestroyed) },
		func() error { return c.wantAlive("after creator unreg", q, false) },
	)
}

func checkRegAdds(c *conformer) (string, error) {
	r, q, err := c.created(2)
	if err != nil {
		return "", err
	}
	a, b := r[0], r[1]
	var d verbs.Destroyed
	if c.mlnx {
		return "B, another context of the creator's process, is no new registrant: its reg is EEXIST, the creator's unreg destroys the QP", steps(
			func() error { return want("B reg", b.Reg(q), syscall.EEXIST) },
			func() error { _, err = a.Unreg(q); return want("creator unreg", err, 0) },
			func() error { return c.wantAlive("after creator unreg", q, false) },
		)
	}
	return "B's reg keeps the QP alive after the creator's unreg; B's unreg destroys it", steps(
		func() error { return want("B reg", b.Reg(q), 0) },
		func() error { d, err = a.Unreg(q); return want("creator unreg", err, 0) },
		func() error { return wantDestroyed("creator unreg", d, verbs.NotDestroyed) },
		func() error { return c.wantAlive("after creator unreg", q, true) },
		func() error { d, err = b.Unreg(q); return want("B unreg", err, 0) },
		func() error { return wantDestroyed("B unreg", d, verbs.WasDestroyed) },
		func() error { return c.wantAlive("after B unreg", q, false) },
	)
}

func checkRegAgain(c *conformer) (string, error) {
	r, q, err := c.created(2)
	if err != nil {
		return "", err
	}
	a, b := r[0], r[1]
	var d verbs.Destroyed
	if c.mlnx {
		return "a second reg in the creator's process is EEXIST, through its own context or another; one unreg destroys the QP, a second is EINVAL", steps(
			func() error { return want("creator reg again", a.Reg(q), syscall.EEXIST) },
			func() error { return want("B reg", b.Reg(q), syscall.EEXIST) },
			func() error { _, err = a.Unreg(q); return want("creator unreg", err, 0) },
			func() error { return c.wantAlive("after creator unreg", q, false) },
			func() error { _, err = a.Unreg(q); return want("creator unreg again", err, syscall.EINVAL) },
		)
	}
	common := []func() error{
		func() error { return want("B reg", b.Reg(q), 0) },
		func() error { return want("B reg again", b.Reg(q), 0) },
		func() error { d, err = a.Unreg(q); return want("creator unreg", err, 0) },
		func() error { d, err = b.Unreg(q); return want("B unreg", err, 0) },
	}
	if c.upstream {
		return "each reg is a counted handle: B's second unreg destroys the QP", steps(append(common,
			func() error { return wantDestroyed("B unreg", d, verbs.NotDestroyed) },
			func() error { return c.wantAlive("after B's first unreg", q, true) },
			func() error { d, err = b.Unreg(q); return want("B unreg again", err, 0) },
			func() error { return wantDestroyed("B unreg again", d, verbs.WasDestroyed) },
			func() error { return c.wantAlive("after B's second unreg", q, false) },
		)...)
	}
	return "the second reg adds nothing: B's one unreg destroys the QP, a second is EINVAL", steps(append(common,
		func() error { return wantDestroyed("B unreg", d, verbs.WasDestroyed) },
		func() error { return c.wantAlive("after B unreg", q, false) },
		func() error { _, err = b.Unreg(q); return want("B unreg again", err, syscall.EINVAL) },
	)...)
}

func checkUnregRemoves(c *conformer) (string, error) {
	if c.mlnx {
		return mlnxUnregRemoves(c)
	}
	r, q, err := c.created(2)
	if err != nil {
		return "", err
	}
	a, b := r[0], r[1]
	var d verbs.Destroyed
	return "B's unreg returns 0 and keeps the QP; the creator's unreg then destroys it", steps(
		func() error { return want("B reg", b.Reg(q), 0) },
		func() error { d, err = b.Unreg(q); return want("B unreg", err, 0) },
		func() error { return wantDestroyed("B unreg", d, verbs.NotDestroyed) },
		func() error { d, err = a.Unreg(q); return want("creator unreg", err, 0) },
		func() error { return wantDestroyed("creator unreg", d, verbs.WasDestroyed) },
		func() error { return c.wantAlive("after creator unreg", q, false) },
	)
}

// mlnxUnregRemoves is S4 where the registrant is the process: a child
// process is the other registrant.
func mlnxUnregRemoves(c *conformer) (string, error) {
	r, q, err := c.created(1)
	if err != nil {
		return "", err
	}
	kill, err := c.heldByChild(q)
	if err != nil {
		return "", err
	}
	return "the creator's unreg returns 0 and leaves the QP to the child process registered on it; the child's death destroys it", steps(
		func() error { _, err := r[0].Unreg(q); return want("creator unreg", err, 0) },
		func() error { return c.wantAlive("after creator unreg", q, true) },
		kill,
		func() error { return c.wantAlive("after the child's death", q, false) },
	)
}

func checkLastUnregDestroys(c *conformer) (string, error) {
	if c.mlnx {
		r, q, err := c.created(1)
		if err != nil {
			return "", err
		}
		a := r[0]
		return "after the process's one unreg the QP number is invalid for every context of it", steps(
			func() error { _, err = a.Unreg(q); return want("last unreg", err, 0) },
			func() error { return want("creator reg after destroy", a.Reg(q), syscall.EINVAL) },
			func() error { return c.wantAlive("after the last unreg", q, false) },
		)
	}
	r, q, err := c.created(2)
	if err != nil {
		return "", err
	}
	a, b := r[0], r[1]
	var d verbs.Destroyed
	return "after the last unreg the QP number is invalid for every registrant", steps(
		func() error { return want("B reg", b.Reg(q), 0) },
		func() error { _, err = a.Unreg(q); return want("creator unreg", err, 0) },
		func() error { d, err = b.Unreg(q); return want("last unreg", err, 0) },
		func() error { return wantDestroyed("last unreg", d, verbs.WasDestroyed) },
		func() error { return want("B reg after destroy", b.Reg(q), syscall.EINVAL) },
		func() error { return want("creator reg after destroy", a.Reg(q), syscall.EINVAL) },
	)
}

func checkRegUnknown(c *conformer) (string, error) {
	a, err := c.registrant("")
	if err != nil {
		return "", err
	}
	// A number that was valid and is no more: QP numbers are not reused
	// at once, so it names no QP.
	q, err := a.CreateRcvQP()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("reg of destroyed qp %#06x and of qp 2^24 fail with EINVAL", q), steps(
		func() error { _, err = a.Unreg(q); return want("creator unreg", err, 0) },
		func() error { return want("reg of a destroyed QP number", a.Reg(q), syscall.EINVAL) },
		func() error { return want("reg of QP number 2^24", a.Reg(verbs.MaxQPN+1), syscall.EINVAL) },
	)
}

func checkRegForeign(c *conformer) (string, error) {
	a, err := c.registrant("")
	if err != nil {
		return "", err
	}
	f, err := c.registrant("-foreign")
	if err != nil {
		return "", err
	}
	q, err := a.CreateRcvQP()
	if err != nil {
		return "", err
	}
	if c.mlnx {
		return "reg through another domain fails with EINVAL and leaves the QP alone (an unreg through it is S8's)", steps(
			func() error { return want("reg from the foreign domain", f.Reg(q), syscall.EINVAL) },
			func() error { return c.wantAlive("after the foreign reg", q, true) },
			func() error { _, err = a.Unreg(q); return want("creator unreg", err, 0) },
		)
	}
	return "reg through another domain fails with EINVAL and leaves the QP alone (a non-XRC QP cannot be made through this API)", steps(
		func() error { return want("reg from the foreign domain", f.Reg(q), syscall.EINVAL) },
		func() error { _, err = f.Unreg(q); return want("unreg from the foreign domain", err, syscall.EINVAL) },
		func() error { return c.wantAlive("after the foreign attempts", q, true) },
		func() error { _, err = a.Unreg(q); return want("creator unreg", err, 0) },
	)
}

func checkUnregNotRegistered(c *conformer) (string, error) {
	if c.upstream && c.opts.Provider == "rdma" {
		return c.kernelUnregNotRegistered()
	}
	if c.upstream {
		return "", skipError("n/a in the upstream API: there is no handle to destroy")
	}
	if c.mlnx {
		return mlnxUnregForeign(c)
	}
	r, q, err := c.created(2)
	if err != nil {
		return "", err
	}
	a, b := r[0], r[1]
	return "unreg by a registrant that never registered fails with EINVAL and leaves the QP alone", steps(
		func() error { _, err = b.Unreg(q); return want("unreg without reg", err, syscall.EINVAL) },
		func() error { return c.wantAlive("after the failed unreg", q, true) },
		func() error { _, err = a.Unreg(q); return want("creator unreg", err, 0) },
	)
}

// kernelUnregNotRegistered is S8 on the rdma provider, asked of the kernel
// in a child registrant (its handle is destroyed): one that never
// registered has no handle, so no call can name the QP; one whose handle
// was opened through another domain than the unreg names gets what
// ibv_destroy_qp of that handle answers, since the kernel destroys
// handles and a handle does not say which domain was meant. The
// provider's own table answers EINVAL in both cases, before any call
// (the harness's guard, what runs see).
func (c *conformer) kernelUnregNotRegistered() (string, error) {
	r, q, err := c.created(1)
	if err != nil {
		return "", err
	}
	a := r[0]
	ans, err := verbs.AskKernel(verbs.ForeignUnreg, c.opts, c.domainPath(""), q)
	if err != nil {
		return "", err
	}
	if err := steps(
		func() error {
			if ans.NeverCalled {
				return errors.New("a registrant without a handle to the QP made a call: the provider found a handle it should not hold")
			}
			return nil
		},
		func() error {
			return want("kernel: ibv_destroy_qp of the child's handle, asked through its other domain", errnoErr(ans.ForeignErrno), 0)
		},
		func() error {
			if !ans.ForeignCalled || ans.HandlesLeft != 0 {
				return fmt.Errorf("kernel: the child's handle was not destroyed (call made %v, %d handle(s) left)", ans.ForeignCalled, ans.HandlesLeft)
			}
			return nil
		},
		func() error { return c.wantAlive("after the child's foreign unreg", q, true) },
		func() error { _, err := a.Unreg(q); return want("creator unreg", err, 0) },
	); err != nil {
		return "", err
	}
	return "kernel (asked in a child): a registrant without a handle has no call to make; ibv_destroy_qp of a handle " +
		"asked through another domain succeeds (0) and drops that handle only, the QP living on for the creator: the upstream " +
		"API has no per-domain registration to refuse. The harness's guard answers EINVAL in both cases in runs", nil
}

// mlnxUnregForeign is S8 on MLNX_OFED: the library finds the handle by
// number alone, so an unreg by a context that never registered, even
// through another domain, destroys the process's one handle.
func mlnxUnregForeign(c *conformer) (string, error) {
	r, q, err := c.created(2)
	if err != nil {
		return "", err
	}
	a, b := r[0], r[1]
	f, err := c.registrant("-foreign")
	if err != nil {
		return "", err
	}
	q2, err := a.CreateRcvQP()
	if err != nil {
		return "", err
	}
	return "an unreg by another context of the process that never registered, or through another domain, returns 0 and destroys the process's handle; the creator's unreg is then EINVAL", steps(
		func() error { _, err := b.Unreg(q); return want("unreg without reg", err, 0) },
		func() error { return c.wantAlive("after the unreg without reg", q, false) },
		func() error { _, err := a.Unreg(q); return want("creator unreg", err, syscall.EINVAL) },
		func() error { _, err := f.Unreg(q2); return want("unreg through the foreign domain", err, 0) },
		func() error { return c.wantAlive("after the foreign unreg", q2, false) },
		func() error {
			_, err := a.Unreg(q2)
			return want("creator unreg of the second QP", err, syscall.EINVAL)
		},
	)
}

func checkCloseBusy(c *conformer) (string, error) {
	r, q, err := c.created(1)
	if err != nil {
		return "", err
	}
	a := r[0]
	if c.opts.Provider == "rdma" {
		// Asked of the kernel in a child (what a provider leaves of a
		// domain whose close failed is its own business), then the
		// harness's guard, which runs see.
		ans, err := verbs.AskKernel(verbs.CloseBusyDomain, c.opts, c.domainPath(""), 0)
		if err != nil {
			return "", err
		}
		if err := want("kernel: ibv_close_xrcd with a QP handle held (asked in a child)", errnoErr(ans.CloseErrno), syscall.EBUSY); err != nil {
			return "", err
		}
		return "kernel (asked in a child): ibv_close_xrcd with a QP handle held is EBUSY; the harness's guard says EBUSY too, " +
				"before any call; after the unreg the close succeeds", steps(
				func() error { return want("close while registered (the harness's guard)", a.Close(), syscall.EBUSY) },
				func() error { _, err = a.Unreg(q); return want("unreg", err, 0) },
				func() error { return want("close after unreg", a.Close(), 0) },
			)
	}
	busy := steps(
		func() error { return want("close while registered", a.Close(), syscall.EBUSY) },
		func() error { _, err = a.Unreg(q); return want("unreg", err, 0) },
		func() error { return want("close after unreg", a.Close(), 0) },
	)
	if !c.mlnx || busy != nil {
		return "close while registered is EBUSY; after the unreg it succeeds", busy
	}
	return "close while registered is EBUSY; after the unreg it succeeds; a device given up while registered leaves no handle " +
		"behind in the process's table (its QP, kept by a child process, registers again from a new context)", mlnxClosedContext(c)
}

// mlnxClosedContext: MLNX_OFED keeps a closed context's handles in its
// table (a later reg of the number is EEXIST, an unreg touches freed
// memory), so the provider must unregister before closing. A device that
// is given up holding a QP another process keeps alive must leave the
// number free for a new context of this process.
func mlnxClosedContext(c *conformer) error {
	g, err := c.registrant("")
	if err != nil {
		return err
	}
	q, err := g.CreateRcvQP()
	if err != nil {
		return err
	}
	kill, err := c.heldByChild(q)
	if err != nil {
		return err
	}
	defer kill()
	if err := g.Device().Abandon(); err != nil {
		return fmt.Errorf("give the device up while registered: %v", err)
	}
	n, err := c.registrant("")
	if err != nil {
		return err
	}
	return steps(
		func() error { return want("reg from a new context after the close", n.Reg(q), 0) },
		func() error { _, err := n.Unreg(q); return want("its unreg", err, 0) },
	)
}

func checkProcessExit(c *conformer) (string, error) {
	a, err := c.registrant("")
	if err != nil {
		return "", err
	}
	// Case 1: another registrant remains.
	q1, err := a.CreateRcvQP()
	if err != nil {
		return "", err
	}
	if err := c.killedChild(q1); err != nil {
		return "", err
	}
	var d verbs.Destroyed
	if err := steps(
		func() error { return c.wantAlive("after the child's death", q1, true) },
		func() error { d, err = a.Unreg(q1); return want("creator unreg after the child's death", err, 0) },
		func() error { return wantDestroyed("creator unreg after the child's death", d, verbs.WasDestroyed) },
		func() error { return c.wantAlive("after the creator's unreg", q1, false) },
	); err != nil {
		return "", err
	}
	// Case 2: the dead process held the last registration.
	q2, err := a.CreateRcvQP()
	if err != nil {
		return "", err
	}
	if c.mlnx {
		// The other registrant must be another process.
		kill, err := c.heldByChild(q2)
		if err != nil {
			return "", err
		}
		if _, err := a.Unreg(q2); err != nil {
			return "", err
		}
		if err := kill(); err != nil {
			return "", err
		}
		return "a SIGKILLed child's registrations are dropped: the survivor's unreg destroys the QP, and a QP whose last registrant was killed is destroyed",
			c.wantAlive("after its last registrant was killed", q2, false)
	}
	b, err := c.registrant("")
	if err != nil {
		return "", err
	}
	if err := want("B reg", b.Reg(q2), 0); err != nil {
		return "", err
	}
	if _, err := a.Unreg(q2); err != nil {
		return "", err
	}
	if err := c.killedChild(q2); err != nil {
		return "", err
	}
	if _, err := b.Unreg(q2); err != nil {
		return "", err
	}
	if err := c.wantAlive("after the survivor's unreg", q2, false); err != nil {
		return "", err
	}
	// Case 3: the killed process held the only handle.
	q3, err := a.CreateRcvQP()
	if err != nil {
		return "", err
	}
	ch, err := verbs.StartRegistrant(c.opts, c.domainPath(""), q3)
	if err != nil {
		return "", fmt.Errorf("child registrant: %w", err)
	}
	_, err = a.Unreg(q3)
	if kerr := ch.Kill(); err == nil {
		err = kerr
	}
	if err != nil {
		return "", err
	}
	done := "a SIGKILLed child's registrations are dropped: the survivor's unreg destroys the QP, and a QP whose only registrant was killed is destroyed"
	k := c.s10Kernel()
	if !k.closesOnly {
		if err := c.wantAlive("after its only registrant was killed", q3, false); err != nil {
			return "", err
		}
		return done + k.note, nil
	}
	// Before 4.13 the dead process's handle was only closed: the QP
	// lives on, bound to its XRCD, until the XRCD is deallocated (its
	// last domain handle closed).
	if err := c.wantAlive("after its only registrant was killed ("+k.release+": it stays with its XRCD)", q3, true); err != nil {
		return "", err
	}
	c.closeAll()
	if err := c.wantAlive("after every domain handle closed (the XRCD deallocated)", q3, false); err != nil {
		return "", err
	}
	return "a SIGKILLed child's registrations are dropped: the survivor's unreg destroys the QP; a QP whose only registrant " +
		"was killed outlives it, bound to its XRCD, and goes when the XRCD is deallocated (" + k.release + ", before 4.13)", nil
}

// s10Kernel is the kernel behaviour S10 expects of the rdma provider: the
// running kernel's (uname), or the test double's, which models 4.13 on.
// Before Linux 4.13 the uverbs cleanup of a closed file only closed a
// shared (XRC target) QP handle, ib_close_qp, so a QP whose last handle a
// dead process held stayed bound to its XRCD (as "RDMA/uverbs: Export XRC
// TGT QPs to user space" designed it); from 4.13 uverbs_free_qp destroys
// every handle with ib_destroy_qp, the last one destroying the QP.
func (c *conformer) s10Kernel() s10Behaviour {
	if c.opts.Provider != "rdma" {
		return s10Behaviour{}
	}
	if c.info.TestDouble {
		return s10Behaviour{note: " (the test double models Linux 4.13 on)"}
	}
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return s10Behaviour{note: " (kernel release unknown: 4.13 on assumed)"}
	}
	return s10For(unix.ByteSliceToString(u.Release[:]))
}

// s10Behaviour: closesOnly when the kernel only closes a dead process's
// shared QP handles (before 4.13); note is said with the outcome.
type s10Behaviour struct {
	release    string
	closesOnly bool
	note       string
}

// s10For reads a kernel release ("4.9.0-8-amd64", "6.8.0-45-generic").
func s10For(release string) s10Behaviour {
	var major, minor int
	if n, _ := fmt.Sscanf(release, "%d.%d", &major, &minor); n != 2 {
		return s10Behaviour{release: release, note: fmt.Sprintf(" (kernel release %q unreadable: 4.13 on assumed)", release)}
	}
	b := s10Behaviour{release: "Linux " + release, closesOnly: major < 4 || major == 4 && minor < 13}
	if !b.closesOnly {
		b.note = " (" + b.release + ", 4.13 on)"
	}
	return b
}

func checkNoXRC(c *conformer) (string, error) {
	opts := c.opts
	on := ""
	if c.info.XRC {
		if opts.Provider == "sim" {
			opts.Sim.NoXRC = true
			opts.Sim.Dir = filepath.Join(c.dir, "sim-noxrc")
		} else {
			// What S11 checks is the provider's and libibverbs' answer to
			// a device that lacks XRC, not the adapter's: any such device
			// of this host serves, best one of the same driver, whose
			// provider library then answers.
			other, why := deviceWithoutXRC(c.info)
			if other == "" {
				return "", skipError(fmt.Sprintf("device %s has XRC and %s; this check needs a device without it", c.info.Name, why))
			}
			opts.Device = other
			on = fmt.Sprintf(" (run on %s, a device of this host without XRC, since %s has it)", other, c.info.Name)
		}
	}
	dev, err := verbs.Open(opts)
	if err != nil {
		return "", err
	}
	defer dev.Close()
	wantErr := syscall.EOPNOTSUPP
	if !c.upstream {
		wantErr = syscall.ENOSYS
	}
	dom, err := dev.OpenDomain(c.domainPath("-noxrc"), true)
	if err == nil {
		dom.Close()
	}
	if err := want("open a domain on a device without XRC", err, wantErr); err != nil {
		return "", err
	}
	if opts.Provider == "sim" {
		// The sim was told it has no XRC and answers with the errno its
		// own table gives: a check of that table, not of a provider.
		return "", selfTest(fmt.Sprintf("opening a domain fails with %s, the errno the sim's own table gives a device "+
			"configured without XRC: a self-test of the table, not conformance evidence", errnoName(wantErr)))
	}
	return fmt.Sprintf("opening a domain fails with %s%s", errnoName(wantErr), on), nil
}

// deviceWithoutXRC names a device of this host that lacks XRC for S11,
// preferring one of the same driver as the device under test (or, where
// sysfs names no driver, of the same name stem: softxrc1 for softxrc0), or
// says why there is none.
func deviceWithoutXRC(under verbs.DeviceInfo) (name, why string) {
	all, err := verbs.Devices()
	if err != nil {
		return "", "the host's devices could not be listed (" + err.Error() + ")"
	}
	kin := func(d verbs.DeviceInfo) bool {
		if under.Driver != "" || d.Driver != "" {
			return d.Driver == under.Driver
		}
		return nameStem(d.Name) == nameStem(under.Name)
	}
	var first string
	for _, d := range all {
		if d.XRC || d.Name == under.Name || d.Extra["error"] != "" {
			continue
		}
		if kin(d) {
			return d.Name, ""
		}
		if first == "" {
			first = d.Name
		}
	}
	if first == "" {
		return "", "no other device of this host lacks it"
	}
	return first, ""
}

// nameStem is a device name without its trailing index: mlx5_ of mlx5_1.
func nameStem(name string) string {
	return strings.TrimRight(name, "0123456789")
}

// killedChild starts a child registrant on qpn in the check's domain, waits
// until it has registered, SIGKILLs it and reaps it: a process that exits
// without unregistering.
func (c *conformer) killedChild(qpn uint32) error {
	if err := verbs.KillRegistrant(c.opts, c.domainPath(""), qpn); err != nil {
		return fmt.Errorf("child registrant: %w", err)
	}
	return nil
}

// modify makes one transition; a port that is down or has no address
// (what RTR needs) skips the check instead of failing it.
func modify(step string, d *verbs.Domain, qpn uint32, to verbs.QPState, wantErr syscall.Errno) error {
	err := d.ModifyQP(qpn, to)
	if errors.Is(err, syscall.ENETDOWN) || errors.Is(err, syscall.EADDRNOTAVAIL) {
		return skipError(fmt.Sprintf("%s: the device's port is down or has no address (%v), so no QP can reach RTR here", step, err))
	}
	return want(step, err, wantErr)
}

func checkRTRWithoutInit(c *conformer) (string, error) {
	r, q, err := c.created(1)
	if err != nil {
		return "", err
	}
	a := r[0]
	return "RESET to RTR is EINVAL (not in the kernel's state table); RESET to INIT to RTR succeeds", steps(
		func() error { return modify("RESET to RTR", a, q, verbs.QPRTR, syscall.EINVAL) },
		func() error { return modify("RESET to INIT", a, q, verbs.QPInit, 0) },
		func() error { return modify("INIT to RTR", a, q, verbs.QPRTR, 0) },
	)
}

func checkRTRBackToInit(c *conformer) (string, error) {
	r, q, err := c.created(1)
	if err != nil {
		return "", err
	}
	a := r[0]
	return "INIT to INIT succeeds; RTR to INIT and RTR to RTR are EINVAL; any state to RESET succeeds", steps(
		func() error { return modify("RESET to INIT", a, q, verbs.QPInit, 0) },
		func() error { return modify("INIT to INIT", a, q, verbs.QPInit, 0) },
		func() error { return modify("INIT to RTR", a, q, verbs.QPRTR, 0) },
		func() error { return modify("RTR to INIT", a, q, verbs.QPInit, syscall.EINVAL) },
		func() error { return modify("RTR to RTR", a, q, verbs.QPRTR, syscall.EINVAL) },
		func() error { return modify("RTR to RESET", a, q, verbs.QPReset, 0) },
		func() error { return modify("RESET to INIT again", a, q, verbs.QPInit, 0) },
	)
}

func checkModifyShared(c *conformer) (string, error) {
	r, q, err := c.created(2)
	if err != nil {
		return "", err
	}
	a, b := r[0], r[1]
	if c.mlnx {
		return "B's reg is EEXIST (the process holds the QP), yet its modify to RTR through its own domain moves the process's handle; the creator's own INIT to RTR is then EINVAL", steps(
			func() error { return modify("creator RESET to INIT", a, q, verbs.QPInit, 0) },
			func() error { return want("B reg", b.Reg(q), syscall.EEXIST) },
			func() error { return modify("B INIT to RTR", b, q, verbs.QPRTR, 0) },
			func() error { return modify("creator INIT to RTR", a, q, verbs.QPRTR, syscall.EINVAL) },
		)
	}
	return "B's modify to RTR moves the QP the creator put in INIT; the creator's own INIT to RTR is then EINVAL", steps(
		func() error { return modify("creator RESET to INIT", a, q, verbs.QPInit, 0) },
		func() error { return want("B reg", b.Reg(q), 0) },
		func() error { return modify("B INIT to RTR", b, q, verbs.QPRTR, 0) },
		func() error { return modify("creator INIT to RTR", a, q, verbs.QPRTR, syscall.EINVAL) },
	)
}

func checkDestroyFromRTR(c *conformer) (string, error) {
	r, q, err := c.created(1)
	if err != nil {
		return "", err
	}
	a := r[0]
	var d verbs.Destroyed
	return "the creator's unreg of its QP in RTR succeeds and destroys it", steps(
		func() error { return modify("RESET to INIT", a, q, verbs.QPInit, 0) },
		func() error { return modify("INIT to RTR", a, q, verbs.QPRTR, 0) },
		func() error { d, err = a.Unreg(q); return want("creator unreg", err, 0) },
		func() error { return wantDestroyed("creator unreg", d, verbs.WasDestroyed) },
		func() error { return c.wantAlive("after creator unreg", q, false) },
	)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
