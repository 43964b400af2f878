package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// Results written before the typed contract read into it: device as the
// old map (vendor numbers as text or as numbers, numa_node absent),
// warnings as strings, firmware counters as provider_detail's fw_cmd keys.
func TestLoadOlderShapes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      string // the environment object
		warnings string // the warnings array
		device   *Device
		detail   map[string]string
		firmware *FirmwareCounters
		warned   []Warning
	}{
		{"no device, no warnings", `{"host":"h"}`, `null`, nil, nil, nil, nil},
		{"the engine's map",
			`{"device":{"name":"mlx5_0","xrc":true,"numa_node":1,"is_test_double":false,"fw_ver":"22.41.1000","driver":"mlx5_core",` +
				`"vendor_id":"0x15b3","vendor_part_id":"4123","max_qp":262144},` +
				`"provider_detail":{"fw_cmd.DESTROY_QP.n":"130","fw_cmd.DESTROY_QP.mean_ns":"150000","fw_cmd.DESTROY_QP.err_ns":"7","fw_cmd.CREATE_QP.n":"0","fw_cmd.CREATE_QP.mean_ns":"0","transport":"ib"}}`,
			`["4 threads on 2 CPUs: threads share CPUs","repetition 2: reg: 10 latencies for 11 operations","unreg_last: an untimed stretch","repetition 3: measured 340ms"]`,
			&Device{Name: "mlx5_0", XRC: true, NUMANode: 1, FWVer: "22.41.1000", Driver: "mlx5_core", VendorID: 0x15b3, VendorPartID: 4123, MaxQP: 262144},
			map[string]string{"transport": "ib"},
			&FirmwareCounters{Commands: map[string]FirmwareCommand{"DESTROY_QP": {N: 130, MeanNS: 150000, ErrNS: 7}, "CREATE_QP": {}}},
			[]Warning{
				{Kind: WarnUnclassified, Severity: SeverityWarning, Text: "4 threads on 2 CPUs: threads share CPUs"},
				{Kind: WarnUnclassified, Severity: SeverityWarning, Repetition: 2, Op: OpReg, Text: "repetition 2: reg: 10 latencies for 11 operations"},
				{Kind: WarnUnclassified, Severity: SeverityWarning, Op: OpUnregLast, Text: "unreg_last: an untimed stretch"},
				{Kind: WarnUnclassified, Severity: SeverityWarning, Repetition: 3, Text: "repetition 3: measured 340ms"},
			}},
		{"the oldest: vendor_id a number, no numa_node; counters not readable",
			`{"device":{"name":"sim0","fw_ver":"sim-1.0","vendor_id":0},"provider_detail":{"fw_cmd":"not readable: permission denied"}}`, `[]`,
			&Device{Name: "sim0", FWVer: "sim-1.0", NUMANode: -1}, nil, &FirmwareCounters{NotReadable: "not readable: permission denied"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			doc := `{"schema":"` + Schema + `","status":"failed","error":"x","started":"2026-01-01T00:00:00Z","finished":"2026-01-01T00:00:01Z",` +
				`"config":{"command_line":["xrcbench"],"workload":"lifecycle","workload_spec":"","provider":"sim","procs":1,"threads":1,"qps":1,"warmup":"0s","repetitions":1,"pin":false,"seed":1,"interval":"1s"},` +
				`"harness":{"timer":"clock_monotonic","timer_overhead_ns":20,"start_skew_ns":0,"warmup":"0s","repetitions":1},` +
				`"ops":{},"workers":[],"repetitions":[],"environment":` + tc.env + `,"warnings":` + tc.warnings + `}`
			if err := os.WriteFile(filepath.Join(dir, FileName), []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			e := r.Environment
			if !reflect.DeepEqual(e.Device, tc.device) {
				t.Errorf("device %+v, want %+v", e.Device, tc.device)
			}
			if !reflect.DeepEqual(e.ProviderDetail, tc.detail) {
				t.Errorf("provider detail %v, want %v (the fw_cmd keys moved to firmware_commands)", e.ProviderDetail, tc.detail)
			}
			if !reflect.DeepEqual(e.Firmware, tc.firmware) {
				t.Errorf("firmware %+v, want %+v", e.Firmware, tc.firmware)
			}
			// Written before the failure counters were read: whether a
			// command failed is unknown, not "none failed".
			if e.Firmware.FailuresKnown() || len(e.Firmware.Failed()) != 0 {
				t.Errorf("firmware %+v: failures known %v, failed %v", e.Firmware, e.Firmware.FailuresKnown(), e.Firmware.Failed())
			}
			if len(r.Warnings) != len(tc.warned) || len(r.Warnings) > 0 && !reflect.DeepEqual(r.Warnings, tc.warned) {
				t.Errorf("warnings %+v, want %+v", r.Warnings, tc.warned)
			}
		})
	}
}

// The typed fields are written as the schema has them and read back the
// same: device an object with vendor numbers as text, warnings objects,
// firmware_commands beside provider_detail.
func TestTypedFieldsRoundTrip(t *testing.T) {
	env := Environment{
		Device: &Device{Name: "mlx5_0", XRC: true, NUMANode: 0, FWVer: "22.41.1000", VendorID: 0x15b3, VendorPartID: 4123},
		Firmware: &FirmwareCounters{Commands: map[string]FirmwareCommand{"DESTROY_QP": {N: 4, MeanNS: 120000.5, ErrNS: 0.25,
			Failures: &FirmwareFailures{Failed: 2, FailedMboxStatus: 1, LastErrno: 121, LastMboxStatus: 3, LastSyndrome: "0x1ab2c3d4"}},
			"CREATE_QP": {N: 4, Failures: &FirmwareFailures{}}}},
	}
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var dev, fw map[string]any
	if json.Unmarshal(raw["device"], &dev) != nil || dev["vendor_id"] != "0x15b3" || dev["vendor_part_id"] != "4123" || dev["numa_node"] != 0.0 {
		t.Errorf("device written as %s", raw["device"])
	}
	if json.Unmarshal(raw["firmware_commands"], &fw) != nil || fw["commands"] == nil {
		t.Errorf("firmware written as %s", b)
	}
	var back Environment
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, env) {
		t.Errorf("read back %+v, want %+v", back, env)
	}
	if !back.Firmware.FailuresKnown() || !reflect.DeepEqual(back.Firmware.Failed(), map[string]uint64{"DESTROY_QP": 2}) {
		t.Errorf("failures known %v, failed %v", back.Firmware.FailuresKnown(), back.Firmware.Failed())
	}

	w := NewWarning(WarnLateReports, SeverityNotice, 2, "", "3 interval report(s) came late")
	if w.Text != "repetition 2: 3 interval report(s) came late" {
		t.Errorf("text %q", w.Text)
	}
	b, _ = json.Marshal([]Warning{w, NewWarning(WarnUntimedGap, SeverityWarning, 0, OpReg, "a stretch")})
	var ws []Warning
	if err := json.Unmarshal(b, &ws); err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0] != w || ws[1].Op != OpReg || ws[1].Text != "reg: a stretch" || ws[1].Kind != WarnUntimedGap {
		t.Errorf("warnings read back as %+v from %s", ws, b)
	}
}

// Facts lists what is known, as result.json names it.
func TestDeviceFacts(t *testing.T) {
	var none *Device
	if none.Facts() != nil || (&Device{NUMANode: -1}).Facts() != nil {
		t.Error("a device without a name has facts")
	}
	d := &Device{Name: "mlx5_0", XRC: true, NUMANode: -1, FWVer: "1.0", VendorID: 0x15b3, VendorPartID: 4123, MaxQP: 0}
	want := [][2]string{{"name", "mlx5_0"}, {"fw_ver", "1.0"}, {"vendor_id", "0x15b3"}, {"vendor_part_id", "4123"},
		{"numa_node", "-1"}, {"xrc", "true"}, {"is_test_double", "false"}}
	if got := d.Facts(); !reflect.DeepEqual(got, want) {
		t.Errorf("facts %q, want %q", got, want)
	}
	if id := d.IdentityFacts(); !reflect.DeepEqual(id, want[:5]) {
		t.Errorf("identity %q, want %q", id, want[:5])
	}
}

// FoldWarnings: warnings of one kind and one meaning are one line, their
// facts joined and the meaning said once; others stay as they are.
func TestFoldWarnings(t *testing.T) {
	means := "a stall there is in no latency"
	gap := func(op, fact string) Warning {
		return NewWarning(WarnUntimedGap, SeverityWarning, 0, op, fact).WithMeans(means)
	}
	ws := []Warning{
		NewWarning(WarnCPUShared, SeverityWarning, 0, "", "4 threads on 2 CPUs"),
		gap("reg", "a stretch of 1ms"), gap("unreg", "a stretch of 2ms"),
		NewWarning(WarnCoverage, SeverityWarning, 0, "", "coverage 80%").WithMeans(means),
		gap("create", "a stretch of 3ms"),
	}
	if ws[1].Text != "reg: a stretch of 1ms: "+means || ws[1].Fact() != "reg: a stretch of 1ms" {
		t.Fatalf("WithMeans: text %q, fact %q", ws[1].Text, ws[1].Fact())
	}
	got := FoldWarnings(ws)
	want := []string{"4 threads on 2 CPUs", "reg: a stretch of 1ms; unreg: a stretch of 2ms: " + means,
		"coverage 80%: " + means, "create: a stretch of 3ms: " + means}
	if !slices.Equal(got, want) {
		t.Errorf("FoldWarnings:\n got %q\nwant %q", got, want)
	}
}
