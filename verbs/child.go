package verbs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childEnv carries a childSpec to a re-executed child process.
const childEnv = "XRCBENCH_VERBS_CHILD"

// selfExe re-executes this process's own image, not the file it was
// started from: that may have been replaced or deleted since.
const selfExe = "/proc/self/exe"

// childSpec says what a child process does before it waits to be killed.
type childSpec struct {
	// "reg": open, register with QPN, wait; "holdlock": take the sim
	// device lock (QPN 0) or QPN's lock, wait; "regtouch": as reg, then
	// on a line from the parent unregister QPN (touching its slot again)
	// and exit 0 if that returned at all; "kernel-s8", "kernel-s9": ask
	// the kernel what the rdma provider's guards answer themselves
	// (conform), print one "answer" line and exit.
	Action  string
	Options Options
	Domain  string
	QPN     uint32
	// "holddomain": take Domain's lock, Hold "shared" or "exclusive",
	// or a command-queue slot ("cmdq"), and wait.
	Hold string
	// "loop": on a line from the parent, for Duration, reg and unreg
	// each of QPNs in turn (Hold "pairs"), create a QP and unreg it
	// (Hold "creates": a create and a destroy, two commands) or create
	// QPs and keep them until the end (Hold "kept": one command each),
	// then print one "result" line (a loopResult).
	QPNs     []uint32
	Duration time.Duration
}

// loopResult is what a loop child did and how its thread spent the time.
type loopResult struct {
	Ops      int           // pairs count two, creates one
	Wall     time.Duration // from the start line to the end of its last op
	RunQueue time.Duration // runnable but not running (schedstat); creates: inside the creates only
	Lock     time.Duration // blocked on the sim's locks (sim_thread_waits)
	CmdQ     time.Duration // waiting for a command-queue slot
	// Creates: each create's time from its call to its return, the
	// queue's response time (a closed queue's known answer).
	CreateNS []int64 `json:",omitempty"`
}

// loopChild is the "loop" action: one thread, locked to its OS thread so
// its schedstat and sim waits are the loop's.
func loopChild(spec childSpec) error {
	runtime.LockOSThread()
	dev, err := Open(spec.Options)
	if err != nil {
		return err
	}
	dom, err := dev.OpenDomain(spec.Domain, false)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	q0, err := threadRunQueue()
	if err != nil {
		return err
	}
	l0, c0 := SimThreadWaits()
	var r loopResult
	var kept []uint32
	start := time.Now()
	for end := start.Add(spec.Duration); time.Now().Before(end); {
		if spec.Hold == "creates" || spec.Hold == "kept" {
			// Only the creates' run-queue time: a create waiting for
			// a CPU keeps its command-queue slot from the others.
			a, err := threadRunQueue()
			if err != nil {
				return err
			}
			t0 := time.Now()
			q, err := dom.CreateRcvQP()
			if err != nil {
				return err
			}
			r.CreateNS = append(r.CreateNS, int64(time.Since(t0)))
			b, err := threadRunQueue()
			if err != nil {
				return err
			}
			r.RunQueue += b - a
			r.Ops++
			if spec.Hold == "kept" {
				kept = append(kept, q)
				continue
			}
			if _, err := dom.Unreg(q); err != nil {
				return err
			}
			continue
		}
		for _, q := range spec.QPNs {
			if err := dom.Reg(q); err != nil {
				return err
			}
			if _, err := dom.Unreg(q); err != nil {
				return err
			}
			r.Ops += 2
		}
	}
	r.Wall = time.Since(start)
	q1, err := threadRunQueue()
	if err != nil {
		return err
	}
	l1, c1 := SimThreadWaits()
	if spec.Hold == "pairs" {
		r.RunQueue = q1 - q0
	}
	for _, q := range kept { // after the measurement: destroys take slots too
		if _, err := dom.Unreg(q); err != nil {
			return err
		}
	}
	r.Lock, r.CmdQ = l1-l0, c1-c0
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fmt.Printf("result %s\n", raw)
	io.Copy(io.Discard, os.Stdin)
	return nil
}

// threadRunQueue is the calling thread's time on the run queue so far:
// the second field of /proc/thread-self/schedstat.
func threadRunQueue() (time.Duration, error) {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("schedstat %q", b)
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	return time.Duration(ns), err
}

// MaybeRunChild runs the child side of a multi-process check when this
// process was started as one, and exits; otherwise it returns at once.
// Call it first thing in main and TestMain.
func MaybeRunChild() {
	raw, ok := os.LookupEnv(childEnv)
	if !ok {
		return
	}
	if err := runChild(raw); err != nil {
		fmt.Fprintf(os.Stderr, "xrcbench child: %v\n", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func runChild(raw string) error {
	var spec childSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return fmt.Errorf("bad %s: %v", childEnv, err)
	}
	switch spec.Action {
	case "reg", "regtouch":
		dev, err := Open(spec.Options)
		if err != nil {
			return err
		}
		dom, err := dev.OpenDomain(spec.Domain, false)
		if err != nil {
			return err
		}
		if err := dom.Reg(spec.QPN); err != nil {
			return err
		}
		if spec.Action == "regtouch" {
			fmt.Println("ready")
			if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
				return err
			}
			_, err := dom.Unreg(spec.QPN)
			return fmt.Errorf("unreg returned (%v) instead of meeting the truncated file", err)
		}
	case "holdlock":
		if err := simHoldLock(spec.Options.Sim.Dir, spec.QPN); err != nil {
			return err
		}
	case "holddomain":
		if err := simHoldDomain(spec.Options.Sim.Dir, spec.Domain, spec.Hold); err != nil {
			return err
		}
	case "loop":
		return loopChild(spec)
	case "kernel-s8", "kernel-s9":
		a, err := kernelAsk(spec)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(a)
		if err != nil {
			return err
		}
		fmt.Printf("answer %s\n", raw)
		return nil
	default:
		return fmt.Errorf("unknown child action %q", spec.Action)
	}
	fmt.Println("ready")
	// Wait to be killed; a closed stdin means the parent is gone.
	io.Copy(io.Discard, os.Stdin)
	return nil
}

// kernelAnswer is what a kernel-s8 or kernel-s9 child saw.
type kernelAnswer struct {
	// S8: an unreg by a registrant that never registered (no handle:
	// Called false, no call can name the QP), then one through another
	// domain than its handle was opened through.
	NeverCalled   bool          `json:"never_called"`
	ForeignErrno  syscall.Errno `json:"foreign_errno"`
	ForeignCalled bool          `json:"foreign_called"`
	HandlesLeft   int           `json:"handles_left"` // in the domain the handle was opened through
	// S9: ibv_close_xrcd with a QP handle held.
	CloseErrno syscall.Errno `json:"close_errno"`
}

// kernelAsk makes the calls of a kernel-s8 or kernel-s9 child, in a
// registrant of its own: the device, spec.Domain, and for S8 a second
// domain (spec.Domain + "-foreign").
func kernelAsk(spec childSpec) (kernelAnswer, error) {
	var a kernelAnswer
	dev, err := Open(spec.Options)
	if err != nil {
		return a, err
	}
	dom, err := dev.OpenDomain(spec.Domain, false)
	if err != nil {
		return a, err
	}
	if spec.Action == "kernel-s9" {
		if _, err := dom.CreateRcvQP(); err != nil {
			return a, err
		}
		a.CloseErrno = rdmaKernelCloseXRCD(dom)
		return a, nil
	}
	foreign, err := dev.OpenDomain(spec.Domain+"-foreign", true)
	if err != nil {
		return a, err
	}
	_, never := rdmaKernelUnreg(foreign, spec.QPN)
	a.NeverCalled = never
	if err := dom.Reg(spec.QPN); err != nil {
		return a, err
	}
	a.ForeignErrno, a.ForeignCalled = rdmaKernelUnreg(foreign, spec.QPN)
	a.HandlesLeft = rdmaDomainHandles(dom)
	return a, nil
}

// askKernel runs a kernel-s8 or kernel-s9 child to its end and returns
// its answer.
func askKernel(spec childSpec) (kernelAnswer, error) {
	var a kernelAnswer
	exe := selfExe
	raw, err := json.Marshal(spec)
	if err != nil {
		return a, err
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.WaitDelay = 30 * time.Second
	out, err := cmd.Output()
	if err != nil {
		return a, fmt.Errorf("child (%s): %v: %s", spec.Action, err, strings.TrimSpace(stderr.String()))
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "answer ")
	if !ok {
		return a, fmt.Errorf("child (%s) said %q", spec.Action, out)
	}
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		return a, fmt.Errorf("child (%s): %v", spec.Action, err)
	}
	return a, nil
}

// child is a running child process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader // the child's stdout past "ready"
}

// startChild re-executes this program to do spec, and returns once the
// child says it is ready.
func startChild(spec childSpec) (*child, error) {
	exe := selfExe
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$") // harmless for xrcbench, keeps a test binary quiet
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	out := bufio.NewReader(stdout)
	go func() {
		line, err := out.ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("said %q", line)
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-time.After(30 * time.Second):
		err = fmt.Errorf("not ready after 30s")
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("child %d: %v: %s", cmd.Process.Pid, err, strings.TrimSpace(stderr.String()))
	}
	return &child{cmd: cmd, stdin: stdin, out: out}, nil
}

// KillRegistrant re-executes this program as a registrant on qpn in the
// domain file domain (opened with opts), waits until it has registered,
// SIGKILLs it and reaps it: a process that exits without unregistering,
// for conformance's check that the kernel (or the sim) drops what a dead
// process held. The program's main (or TestMain) calls MaybeRunChild.
func KillRegistrant(opts Options, domain string, qpn uint32) error {
	ch, err := startChild(childSpec{Action: "reg", Options: opts, Domain: domain, QPN: qpn})
	if err != nil {
		return err
	}
	return ch.kill()
}

// ChildRegistrant is a registrant in another process of this program,
// started by StartRegistrant: conformance's process-exit checks kill it.
type ChildRegistrant struct{ ch *child }

// StartRegistrant re-executes this program as a registrant on qpn in the
// domain at path and returns once it holds the registration.
func StartRegistrant(opts Options, domain string, qpn uint32) (*ChildRegistrant, error) {
	ch, err := startChild(childSpec{Action: "reg", Options: opts, Domain: domain, QPN: qpn})
	if err != nil {
		return nil, err
	}
	return &ChildRegistrant{ch}, nil
}

// Kill SIGKILLs the registrant and waits until it is gone.
func (r *ChildRegistrant) Kill() error { return r.ch.kill() }

// KernelAnswer is what a child asked of the kernel (AskKernel), past the
// rdma provider's own guards.
type KernelAnswer = kernelAnswer

// KernelQuestion is what AskKernel asks, in a child of its own, of the
// kernel directly: what the rdma provider's guards keep runs from seeing.
type KernelQuestion string

const (
	// ForeignUnreg: what an unreg answers by a registrant without a
	// handle on the QP, and by one through another domain than the
	// handle's (a child registrant on the domain and a second one beside it).
	ForeignUnreg KernelQuestion = "kernel-s8"
	// CloseBusyDomain: what ibv_close_xrcd answers with a QP handle held.
	CloseBusyDomain KernelQuestion = "kernel-s9"
)

// AskKernel asks q in a child process on domain (and qpn, for
// ForeignUnreg) and returns what the kernel answered.
func AskKernel(q KernelQuestion, opts Options, domain string, qpn uint32) (KernelAnswer, error) {
	switch q {
	case ForeignUnreg, CloseBusyDomain:
	default:
		return KernelAnswer{}, fmt.Errorf("no such kernel question %q", q)
	}
	return askKernel(childSpec{Action: string(q), Options: opts, Domain: domain, QPN: qpn})
}

// kill SIGKILLs the child and waits for it, so it is gone, not a zombie.
func (c *child) kill() error {
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	err := c.cmd.Wait()
	c.stdin.Close()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return nil
		}
	}
	return fmt.Errorf("child %d did not die of SIGKILL: %v", c.cmd.Process.Pid, err)
}
