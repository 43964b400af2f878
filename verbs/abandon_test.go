package verbs

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// Close refuses a device with open domains; Abandon gives it up with what
// they hold, as process exit would: the registrations go (the last one
// destroys its QP) and the domains are closed, with no reaching into the
// Device's internals.
func TestDeviceAbandon(t *testing.T) {
	for _, sem := range []Semantics{Legacy, Upstream} {
		t.Run(string(sem), func(t *testing.T) {
			dir := t.TempDir()
			open := func() (*Device, *Domain) {
				dev, err := Open(Options{Provider: "sim", Sim: SimOptions{Dir: filepath.Join(dir, "dev"), Semantics: sem}})
				if err != nil {
					t.Fatal(err)
				}
				dom, err := dev.OpenDomain(filepath.Join(dir, "dom"), true)
				if err != nil {
					t.Fatal(err)
				}
				return dev, dom
			}
			dev, dom := open()
			q, err := dom.CreateRcvQP()
			if err != nil {
				t.Fatal(err)
			}
			if err := dom.Close(); !errors.Is(err, syscall.EBUSY) {
				t.Fatalf("domain close with a registration = %v, want EBUSY", err)
			}
			if err := dev.Close(); !errors.Is(err, syscall.EBUSY) {
				t.Fatalf("device close with an open domain = %v, want EBUSY", err)
			}
			if err := dev.Abandon(); err != nil {
				t.Fatalf("abandon: %v", err)
			}
			if err := dom.Reg(q); !errors.Is(err, ErrClosed) {
				t.Errorf("reg on an abandoned device's domain = %v, want ErrClosed", err)
			}
			if err := dom.Close(); err != nil {
				t.Errorf("close of an abandoned domain = %v, want nil (already closed)", err)
			}
			if err := dev.Close(); err != nil {
				t.Errorf("close after abandon = %v", err)
			}
			// The creator's registration was the last: the QP is gone.
			dev2, probe := open()
			if err := probe.Reg(q); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("reg of the abandoned QP = %v, want EINVAL (destroyed)", err)
			}
			if err := probe.Close(); err != nil {
				t.Error(err)
			}
			if err := dev2.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}
