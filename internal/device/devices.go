package device

import (
	"fmt"

	"github.com/xrcbench/xrcbench/verbs"
)

// Devices lists every RDMA device libibverbs reports, opening each to
// query it (device.Devices), with the kernel's count and numbers of each
// one's QPs (RDMA netlink), or why the kernel could not be asked. A
// device that cannot be opened is listed with the reason in
// Extra["error"]. With no device at all, the error says why in one line.
func Devices() ([]verbs.DeviceInfo, error) {
	out, err := verbs.Devices()
	if err != nil {
		return nil, err
	}
	live, liveErr := LiveQPsAll()
	for i := range out {
		setLiveQPs(&out[i], live, liveErr)
	}
	return out, nil
}

// setLiveQPs fills in the kernel's count of the device's QPs, from all
// (LiveQPsAll's answer, or its error err): "n/a: <why>" where the kernel
// could not be asked or does not list the device.
func setLiveQPs(in *verbs.DeviceInfo, all map[string][]LiveQP, err error) {
	qps, ok := all[in.Name]
	switch {
	case err != nil:
		in.LiveQPsNote = "n/a: " + err.Error()
	case !ok:
		in.LiveQPsNote = fmt.Sprintf("n/a: the kernel's RDMA netlink does not list %s", in.Name)
	default:
		n := len(qps)
		in.LiveQPs = &n
		in.LiveQPNs = make([]uint32, 0, n)
		for _, q := range qps {
			in.LiveQPNs = append(in.LiveQPNs, q.QPN)
		}
	}
}
