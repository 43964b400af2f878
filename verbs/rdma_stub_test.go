//go:build !rdma

package verbs

import (
	"errors"
	"strings"
	"testing"
)

// TestRDMANotBuilt: without the rdma tag (no rdma-core headers), the rdma
// provider is listed as not built with what to install, Open says the
// same, and the rdma tests (rdma_test.go) are skipped with that reason.
func TestRDMANotBuilt(t *testing.T) {
	found := false
	for _, p := range Providers() {
		if p.Name != "rdma" {
			continue
		}
		found = true
		if p.Available || !strings.Contains(p.Reason, "not built: install libibverbs-dev") {
			t.Errorf("rdma provider = %+v, want unavailable, reason naming libibverbs-dev", p)
		}
	}
	if !found {
		t.Fatal("the rdma provider is not listed at all")
	}
	_, err := Open(Options{Provider: "rdma"})
	if err == nil || !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), RDMANotBuilt) {
		t.Fatalf("Open(rdma) = %v, want ErrNotSupported with %q", err, RDMANotBuilt)
	}
	t.Skip("rdma provider " + RDMANotBuilt + ": its tests through the libibverbs double (rdma_test.go) need the rdma build tag")
}
