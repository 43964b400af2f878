package results

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// FirmwareCounters is what an adapter's own command counters (mlx5
// debugfs) say its firmware did over the whole run: per command
// (CREATE_QP, DESTROY_QP, ...), how many and their mean time; or why the
// counters were not readable. Absent where the run did not look (sim,
// null).
type FirmwareCounters struct {
	// NotReadable says why the counters could not be read
	// ("not readable: ..."); Commands is then empty.
	NotReadable string                     `json:"not_readable,omitempty"`
	Commands    map[string]FirmwareCommand `json:"commands,omitempty"`
}

// FirmwareCommand is one firmware command over the run.
type FirmwareCommand struct {
	N      uint64  `json:"n"`
	MeanNS float64 `json:"mean_ns"`
	// ErrNS bounds MeanNS's error from the kernel's integer average; 0
	// when N is.
	ErrNS float64 `json:"err_ns,omitempty"`
	// Failures is how many of the command failed over the run (mlx5's
	// failed and failed_mbox_status); nil where the kernel keeps no
	// failure counters, and in results written before they were read.
	Failures *FirmwareFailures `json:"failures,omitempty"`
}

// FirmwareFailures are one command's failures over the run.
type FirmwareFailures struct {
	Failed uint64 `json:"failed"`
	// FailedMboxStatus counts those the firmware answered with a bad
	// mailbox status (the rest failed in the driver: a timeout, a
	// command interface down).
	FailedMboxStatus uint64 `json:"failed_mbox_status"`
	// The last failure's, when Failed is not 0: its errno (positive,
	// as the kernel keeps it), mailbox status, and the firmware's
	// syndrome ("0x%08x", absent on kernels that do not keep it).
	LastErrno      uint64 `json:"last_errno,omitempty"`
	LastMboxStatus uint64 `json:"last_mbox_status,omitempty"`
	LastSyndrome   string `json:"last_syndrome,omitempty"`
}

// FailuresKnown reports whether the counters say whether any firmware
// command failed: they were readable and the kernel keeps failure
// counters.
func (fw *FirmwareCounters) FailuresKnown() bool {
	if fw == nil || fw.NotReadable != "" {
		return false
	}
	for _, c := range fw.Commands {
		if c.Failures != nil {
			return true
		}
	}
	return false
}

// Failed lists the commands that failed over the run, by name, with how
// many each.
func (fw *FirmwareCounters) Failed() map[string]uint64 {
	m := map[string]uint64{}
	if fw == nil {
		return m
	}
	for name, c := range fw.Commands {
		if c.Failures != nil && c.Failures.Failed > 0 {
			m[name] = c.Failures.Failed
		}
	}
	return m
}

// FailedWarning is the warning that firmware commands failed during the
// run, naming each with its count; false when none did or it is not known.
func (fw *FirmwareCounters) FailedWarning() (Warning, bool) {
	failed := fw.Failed()
	if len(failed) == 0 {
		return Warning{}, false
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(failed)) {
		parts = append(parts, fmt.Sprintf("%s %d", name, failed[name]))
	}
	return NewWarning(WarnFirmwareFailed, SeverityWarning, 0, "",
		"firmware commands failed during the run (mlx5 debugfs): "+strings.Join(parts, ", ")).
		WithMeans("a failure the verb did not report (a destroy the kernel's shared-QP path ignored) leaves the device holding " +
			"what the run counts as gone; the firmware notes give the last errno, mailbox status and syndrome, and the kernel log says more"), true
}

// legacyFirmwarePrefix starts the provider_detail keys results that predate
// FirmwareCounters carried the counters in: "fw_cmd.DESTROY_QP.n",
// ".mean_ns", ".err_ns", or "fw_cmd" alone for why they were not readable.
const legacyFirmwarePrefix = "fw_cmd"

// legacyFirmware takes the fw_cmd keys out of an older result's provider
// detail and returns them as counters; nil when there are none. A command
// whose count or mean does not parse is left out, as the reports of those
// results left it out.
func legacyFirmware(detail map[string]string) *FirmwareCounters {
	var fw *FirmwareCounters
	fields := map[string]map[string]string{} // command → field → text
	for k, v := range detail {
		if k == legacyFirmwarePrefix {
			fw = orNewFirmware(fw)
			fw.NotReadable = v
			delete(detail, k)
			continue
		}
		rest, ok := strings.CutPrefix(k, legacyFirmwarePrefix+".")
		if !ok {
			continue
		}
		cmd, field, ok := cutLast(rest, ".")
		if !ok || field != "n" && field != "mean_ns" && field != "err_ns" {
			continue // not a counter: left where it was
		}
		if fields[cmd] == nil {
			fields[cmd] = map[string]string{}
		}
		fields[cmd][field] = v
		delete(detail, k)
	}
	for cmd, f := range fields {
		fw = orNewFirmware(fw)
		n, errN := strconv.ParseUint(f["n"], 10, 64)
		mean, errM := strconv.ParseFloat(f["mean_ns"], 64)
		if errN != nil || errM != nil {
			continue
		}
		c := FirmwareCommand{N: n, MeanNS: mean}
		if e, err := strconv.ParseFloat(f["err_ns"], 64); err == nil {
			c.ErrNS = e
		}
		if fw.Commands == nil {
			fw.Commands = map[string]FirmwareCommand{}
		}
		fw.Commands[cmd] = c
	}
	return fw
}

func orNewFirmware(fw *FirmwareCounters) *FirmwareCounters {
	if fw == nil {
		return &FirmwareCounters{}
	}
	return fw
}

// cutLast cuts s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// UnmarshalJSON reads an environment as any result wrote it: the firmware
// counters of results that predate Firmware move from provider_detail's
// fw_cmd keys into it.
func (e *Environment) UnmarshalJSON(b []byte) error {
	type plain Environment
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = Environment(p)
	if e.Firmware == nil {
		e.Firmware = legacyFirmware(e.ProviderDetail)
	}
	if len(e.ProviderDetail) == 0 {
		e.ProviderDetail = nil
	}
	return nil
}
