package device

import "github.com/xrcbench/xrcbench/internal/errname"

// errnoName names an errno as C does ("EINVAL"), as verbs does.
var errnoName = errname.Name
