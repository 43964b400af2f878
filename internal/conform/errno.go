package conform

import (
	"syscall"

	"github.com/xrcbench/xrcbench/internal/errname"
)

// errnoName names an errno as C does ("EINVAL"), as verbs does.
var errnoName = errname.Name

// errnoErr is an errno a child reported as an error: nil for 0, as the
// providers' calls return them.
func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}
