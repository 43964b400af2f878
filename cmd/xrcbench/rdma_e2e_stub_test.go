//go:build !rdma

package main

import (
	"testing"

	"github.com/xrcbench/xrcbench/verbs"
)

// The rdma build's end-to-end test (rdma_e2e_test.go) cannot exist here:
// say why in the test output rather than leave it out silently.
func TestRunLifecycleThroughDouble(t *testing.T) {
	t.Skip("rdma provider " + verbs.RDMANotBuilt + " (the test runs workers through the libibverbs double)")
}
