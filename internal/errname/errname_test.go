package errname

import (
	"syscall"
	"testing"
)

func TestName(t *testing.T) {
	for _, tt := range []struct {
		e    syscall.Errno
		want string
	}{
		{0, "success"},
		{syscall.EINVAL, "EINVAL"},
		{syscall.EOPNOTSUPP, "EOPNOTSUPP"}, // not ENOTSUP, which x/sys prefers for 95
		{syscall.EBUSY, "EBUSY"},
		{4000, "errno 4000"},
	} {
		if got := Name(tt.e); got != tt.want {
			t.Errorf("Name(%d) = %q, want %q", int(tt.e), got, tt.want)
		}
	}
}
