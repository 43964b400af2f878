package main

import (
	"os"
	"testing"

	"github.com/xrcbench/xrcbench/verbs"
)

func TestMain(m *testing.M) {
	// conform's multi-process checks re-execute this test binary.
	verbs.MaybeRunChild()
	os.Exit(m.Run())
}
