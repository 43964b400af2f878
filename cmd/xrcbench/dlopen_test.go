package main

import (
	"debug/elf"
	"strings"
	"testing"
)

// TestLinksNoVerbs: the binary needs no rdma-core library to start. Its
// DT_NEEDED list names none of libibverbs, libnl, librdmacm or a provider,
// and it imports no ibv_ symbol: the rdma and legacy providers dlopen
// libibverbs.so.1 when used (verbs/ibvload.c).
func TestLinksNoVerbs(t *testing.T) {
	bin := rdmaBinary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) == 0 {
		t.Fatal("the binary has no DT_NEEDED at all: not the cgo build this test is about")
	}
	for _, l := range libs {
		for _, bad := range []string{"libibverbs", "libnl", "librdmacm", "libmlx", "libefa"} {
			if strings.HasPrefix(l, bad) {
				t.Errorf("the binary links %s (DT_NEEDED %v)", l, libs)
			}
		}
	}
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "ibv_") || strings.HasPrefix(s.Name, "_ibv_") {
			t.Errorf("the binary imports %s@%s from %q", s.Name, s.Version, s.Library)
		}
	}
	t.Logf("DT_NEEDED: %v", libs)
}
