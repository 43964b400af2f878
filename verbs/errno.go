package verbs

import "github.com/xrcbench/xrcbench/internal/errname"

// errnoName names an errno as C does ("EINVAL"); its one home is
// internal/errname, which the packages split out of verbs (device,
// conform) share without importing each other.
var errnoName = errname.Name
