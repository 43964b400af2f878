package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

// legacyEnv is an environment as results that predate firmware_commands
// wrote it, the counters as provider_detail's fw_cmd keys, read through
// the contract's reader.
func legacyEnv(t *testing.T, detail map[string]string) results.Environment {
	t.Helper()
	b, err := json.Marshal(map[string]any{"provider_detail": detail})
	if err != nil {
		t.Fatal(err)
	}
	var env results.Environment
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	return env
}

func TestFirmwareNotes(t *testing.T) {
	withOps := func(detail map[string]string) *results.Result {
		return &results.Result{
			Environment: legacyEnv(t, detail),
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
			if got := firmwareNotes(withOps(tc.detail)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A modify issues RST2INIT_QP (and INIT2RTR_QP for rtr), a destroy out of
// RESET 2RST_QP first: each is set beside its op kind like create and
// destroy, its count checked against the measured operations that issue
// one. A counter with fewer commands than such operations misses some and
// is said to; at qp_state init no modify issues INIT2RTR_QP.
func TestFirmwareNotesModify(t *testing.T) {
	run := func(state string, detail map[string]string) *results.Result {
		return &results.Result{
			Config:      results.Config{QPState: state},
			Environment: legacyEnv(t, detail),
			Ops: map[string]results.OpStats{
				results.OpModify:    {Count: 100, NS: results.Latency{P50: 40_000}},
				results.OpUnregLast: {Count: 100, NS: results.Latency{P50: 200_000}},
			},
		}
	}
	counters := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 3 {
			m["fw_cmd."+kv[i]+".n"], m["fw_cmd."+kv[i]+".mean_ns"] = kv[i+1], kv[i+2]
		}
		return m
	}
	const whole = " commands during the whole run (set-up, warm-up and teardown included), mean "
	for _, tc := range []struct {
		name   string
		state  string
		detail map[string]string
		want   []string
	}{
		{"rtr", "rtr", counters("RST2INIT_QP", "130", "12000", "INIT2RTR_QP", "130", "25000", "2RST_QP", "130", "30000"),
			[]string{
				"firmware RST2INIT_QP: 130" + whole + "12.0µs; 100 modify measured, p50 40.0µs; no firmware share is shown, as the windows differ",
				"firmware INIT2RTR_QP: 130" + whole + "25.0µs; 100 modify measured, p50 40.0µs; no firmware share is shown, as the windows differ",
				"firmware 2RST_QP: 130" + whole + "30.0µs; 100 unreg_last measured, p50 200µs; no firmware share is shown, as the windows differ",
			}},
		{"rtr, a counter short of the modifies", "rtr", counters("RST2INIT_QP", "130", "12000", "INIT2RTR_QP", "0", "0"),
			[]string{
				"firmware RST2INIT_QP: 130" + whole + "12.0µs; 100 modify measured, p50 40.0µs; no firmware share is shown, as the windows differ",
				"firmware INIT2RTR_QP: 0" + whole + "0ns; 100 modify measured, p50 40.0µs; fewer commands than measured modify, each of which issues one: the counter does not see them all",
			}},
		{"init", "init", counters("RST2INIT_QP", "100", "12000", "INIT2RTR_QP", "0", "0", "2RST_QP", "100", "30000"),
			[]string{
				"firmware RST2INIT_QP: 100" + whole + "12.0µs; 100 modify measured, p50 40.0µs; no firmware share is shown, as the windows differ",
				"firmware INIT2RTR_QP: 0" + whole + "0ns; 100 modify measured, p50 40.0µs, which issue none at qp_state init",
				"firmware 2RST_QP: 100" + whole + "30.0µs; 100 unreg_last measured, p50 200µs; no firmware share is shown, as the windows differ",
			}},
		{"reset", "reset", counters("2RST_QP", "0", "0"),
			[]string{"firmware 2RST_QP: 0" + whole + "0ns; 100 unreg_last measured, p50 200µs, which issue none at qp_state reset"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := firmwareNotes(run(tc.state, tc.detail)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// The typed counters as bench writes them give the notes the legacy keys
// gave, and the legacy keys leave provider_detail.
func TestFirmwareNotesTyped(t *testing.T) {
	r := &results.Result{
		Environment: results.Environment{Firmware: &results.FirmwareCounters{Commands: map[string]results.FirmwareCommand{
			"DESTROY_QP": {N: 130, MeanNS: 150000, ErrNS: 6.2}, "CREATE_QP": {}}}},
		Ops: map[string]results.OpStats{results.OpUnregLast: {Count: 100, NS: results.Latency{P50: 200_000}}},
	}
	want := []string{
		"firmware CREATE_QP: 0 commands during the whole run (set-up, warm-up and teardown included), mean 0ns",
		"firmware DESTROY_QP: 130 commands during the whole run (set-up, warm-up and teardown included), mean 150µs ± 7ns " +
			"(the kernel's average is whole ns); 100 unreg_last measured, p50 200µs; no firmware share is shown, as the windows differ",
	}
	if got := firmwareNotes(r); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	env := legacyEnv(t, map[string]string{"cost": "reg=2us", "fw_cmd.DESTROY_QP.n": "3", "fw_cmd.DESTROY_QP.mean_ns": "9"})
	if !reflect.DeepEqual(env.ProviderDetail, map[string]string{"cost": "reg=2us"}) ||
		env.Firmware == nil || env.Firmware.Commands["DESTROY_QP"] != (results.FirmwareCommand{N: 3, MeanNS: 9}) {
		t.Errorf("legacy keys read as provider detail %v, firmware %+v", env.ProviderDetail, env.Firmware)
	}
}

// Where the kernel keeps failure counters, each command's note says how
// many failed over the run and, when any did, how the last one did (errno,
// mailbox status, syndrome); without them it says nothing of failures.
func TestFirmwareNotesFailures(t *testing.T) {
	const whole = " commands during the whole run (set-up, warm-up and teardown included), mean "
	for _, tc := range []struct {
		name string
		cmd  results.FirmwareCommand
		want string
	}{
		{"no counters", results.FirmwareCommand{N: 3, MeanNS: 9}, "firmware DESTROY_QP: 3" + whole + "9ns"},
		{"none failed", results.FirmwareCommand{N: 3, MeanNS: 9, Failures: &results.FirmwareFailures{}}, "firmware DESTROY_QP: 3" + whole + "9ns; none failed"},
		{"two failed", results.FirmwareCommand{N: 3, MeanNS: 9, Failures: &results.FirmwareFailures{Failed: 2, FailedMboxStatus: 1,
			LastErrno: 121, LastMboxStatus: 3, LastSyndrome: "0x1ab2c3d4"}},
			"firmware DESTROY_QP: 3" + whole + "9ns; 2 FAILED (1 with a bad mailbox status from the firmware), the last errno 121 (remote I/O error), mailbox status 0x3, syndrome 0x1ab2c3d4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &results.Result{Environment: results.Environment{Firmware: &results.FirmwareCounters{
				Commands: map[string]results.FirmwareCommand{"DESTROY_QP": tc.cmd}}}}
			if got := firmwareNotes(r); !reflect.DeepEqual(got, []string{tc.want}) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A run whose firmware commands failed carries the engine's
// firmware_failed warning: summary.md and report.html list it among the
// warnings, as every engine warning.
func TestFirmwareFailedWarning(t *testing.T) {
	fw := &results.FirmwareCounters{Commands: map[string]results.FirmwareCommand{
		"DESTROY_QP": {N: 3, Failures: &results.FirmwareFailures{Failed: 2}}, "CREATE_QP": {N: 3, Failures: &results.FirmwareFailures{}}}}
	w, ok := fw.FailedWarning()
	if !ok || w.Kind != results.WarnFirmwareFailed || !strings.Contains(w.Text, "firmware commands failed during the run (mlx5 debugfs): DESTROY_QP 2:") {
		t.Errorf("warning %+v", w)
	}
	if s, ok := (&results.FirmwareCounters{Commands: map[string]results.FirmwareCommand{"CREATE_QP": {Failures: &results.FirmwareFailures{}}}}).FailedWarning(); ok {
		t.Errorf("none failed, yet %q", s.Text)
	}
	r := &results.Result{Environment: results.Environment{Firmware: fw}, Warnings: []results.Warning{w}}
	got := warningLines(&Run{Result: r})
	if len(got) == 0 || got[0] != "engine: "+results.WarningTexts([]results.Warning{w})[0] {
		t.Errorf("warnings %q", got)
	}
}
