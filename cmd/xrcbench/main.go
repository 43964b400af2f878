// Command xrcbench measures what XRC receive-QP registration costs on RDMA
// adapters. See README.md and `xrcbench --help`.
package main

import (
	"os"

	"github.com/xrcbench/xrcbench/verbs"
)

func main() {
	// A re-executed child of `conform` runs its part and exits here.
	verbs.MaybeRunChild()
	os.Exit(run(os.Stdout, os.Stderr, os.Args[1:]))
}
