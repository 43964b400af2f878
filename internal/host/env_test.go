package host

import (
	"reflect"
	"testing"

	"github.com/xrcbench/xrcbench/internal/device"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// The provider's device info becomes the result's typed device, each fact
// in its field; the sim's private directory stays out of the detail.
func TestEnvironmentDevice(t *testing.T) {
	info := verbs.DeviceInfo{Name: "mlx5_0", Provider: "rdma", XRC: true, FWVer: "22.41.1000", HWVer: "0", VendorID: 0x15b3,
		VendorPartID: 4123, NodeGUID: "b8ce:f603:00a1:b2c4", MaxQP: 262144, Driver: "mlx5_core", NUMANode: 1, Library: "rdma-core 50",
		TestDouble: true, Extra: map[string]string{"dir": "/tmp/x", "transport": "ib"}}
	env := Environment(info)
	want := &results.Device{Name: "mlx5_0", XRC: true, NUMANode: 1, TestDouble: true, FWVer: "22.41.1000", HWVer: "0",
		NodeGUID: "b8ce:f603:00a1:b2c4", Driver: "mlx5_core", Library: "rdma-core 50", VendorID: 0x15b3, VendorPartID: 4123, MaxQP: 262144}
	if !reflect.DeepEqual(env.Device, want) {
		t.Errorf("device %+v\nwant   %+v", env.Device, want)
	}
	if !reflect.DeepEqual(env.ProviderDetail, map[string]string{"transport": "ib"}) {
		t.Errorf("provider detail %v", env.ProviderDetail)
	}
	if env := Environment(verbs.DeviceInfo{Provider: "sim", NUMANode: -1}); env.Device != nil {
		t.Errorf("no device opened, yet device %+v", env.Device)
	}
}

// The firmware counters over the run are the typed field, not
// provider_detail keys.
func TestFirmwareRecord(t *testing.T) {
	var env results.Environment
	(&Firmware{}).Record(&env)
	if env.Firmware != nil {
		t.Errorf("counters %+v recorded by a run that did not look", env.Firmware)
	}
	f := &Firmware{Taken: true, Info: verbs.DeviceInfo{Name: "xbfake0", Driver: "xrcbench_fake"},
		before: device.FWSnapshot{Device: "xbfake0", NotReadable: "not readable: driver xrcbench_fake has no mlx5 debugfs"}}
	f.Record(&env)
	if env.Firmware == nil || env.Firmware.NotReadable != f.before.NotReadable || env.ProviderDetail != nil {
		t.Errorf("firmware %+v, provider detail %v", env.Firmware, env.ProviderDetail)
	}
}
