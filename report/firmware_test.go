package report

import (
	"reflect"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

func TestFirmwareNotes(t *testing.T) {
	withOps := func(detail map[string]string) *results.Result {
		return &results.Result{
			Environment: results.Environment{ProviderDetail: detail},
			Ops: map[string]results.OpStats{
				results.OpUnregLast: {Count: 100, NS: results.Latency{P50: 200_000}},
			},
		}
	}
	for _, tc := range []struct {
		name   string
		detail map[string]string
		want   []string
	}{
		{"not looked for (sim)", nil, nil},
		{"not readable", map[string]string{"fw_cmd": "not readable: permission denied"},
			[]string{"firmware command counters: not readable: permission denied"}},
		// The counters span the whole run, not the measured window: the
		// counts are set side by side and no share is computed.
		{"destroy", map[string]string{"fw_cmd.DESTROY_QP.n": "130", "fw_cmd.DESTROY_QP.mean_ns": "150000",
			"fw_cmd.DESTROY_QP.err_ns": "7", "fw_cmd.CREATE_QP.n": "0", "fw_cmd.CREATE_QP.mean_ns": "0"},
			[]string{
				"firmware CREATE_QP: 0 commands during the whole run (set-up, warm-up and teardown included), mean 0ns",
				"firmware DESTROY_QP: 130 commands during the whole run (set-up, warm-up and teardown included), mean 150µs ± 7ns " +
					"(the kernel's average is whole ns); 100 unreg_last measured, p50 200µs; no firmware share is shown, as the windows differ",
			}},
		{"garbled counters are left out", map[string]string{"fw_cmd.DESTROY_QP.n": "many", "fw_cmd.DESTROY_QP.mean_ns": "1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FirmwareNotes(withOps(tc.detail)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
