package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Device is the device a run measured, as the provider described it
// (bench fills it from the provider's device info). Its facts are typed,
// so no reader looks them up by a string key; a fact the provider did not
// give is its zero value ("" for text), NUMANode -1. The device's part of
// the bill of materials (driver version, board_id, PCIe link, ...) is
// DeviceBOM, in Environment.BOM, where the release attachment reads it.
//
// On disk it is the object results have always had ("device": {"name":
// ..., "fw_ver": ...}), so older readers keep reading it; UnmarshalJSON
// also reads the shapes older results wrote (vendor_id a number,
// numa_node absent).
type Device struct {
	Name       string `json:"name"`
	XRC        bool   `json:"xrc"`
	NUMANode   int    `json:"numa_node"` // -1 when unknown
	TestDouble bool   `json:"is_test_double"`
	Semantics  string `json:"semantics,omitempty"` // the sim's: legacy or upstream
	FWVer      string `json:"fw_ver,omitempty"`
	HWVer      string `json:"hw_ver,omitempty"`
	NodeGUID   string `json:"node_guid,omitempty"`
	Driver     string `json:"driver,omitempty"`
	Library    string `json:"library,omitempty"` // e.g. the rdma-core version
	// VendorID and VendorPartID are the PCI vendor and part (0: unknown),
	// written as text ("0x15b3", "4123") as results always have.
	VendorID     uint32 `json:"-"`
	VendorPartID uint32 `json:"-"`
	MaxQP        int    `json:"max_qp,omitempty"`
	// LegacyFlavor is the legacy provider's library (ofed1, mlnx-compat)
	// and Registrant what is one registrant there (context, process).
	LegacyFlavor string `json:"legacy_flavor,omitempty"`
	Registrant   string `json:"registrant,omitempty"`
	// Port and the GID the rdma and legacy providers moved QPs through to
	// RTR (0 / GIDIndex nil: none, or a port without a GRH).
	Port     int    `json:"port,omitempty"`
	GIDIndex *int   `json:"gid_index,omitempty"`
	GID      string `json:"gid,omitempty"`
	GIDType  string `json:"gid_type,omitempty"`
}

// MarshalJSON writes the device with its vendor numbers as text, both or
// neither.
func (d Device) MarshalJSON() ([]byte, error) {
	type plain Device // no MarshalJSON: no recursion
	out := struct {
		plain
		VendorID     string `json:"vendor_id,omitempty"`
		VendorPartID string `json:"vendor_part_id,omitempty"`
	}{plain: plain(d)}
	if d.VendorID != 0 || d.VendorPartID != 0 {
		out.VendorID, out.VendorPartID = fmt.Sprintf("%#x", d.VendorID), strconv.FormatUint(uint64(d.VendorPartID), 10)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a device as any result wrote it. numa_node absent
// (results that predate it) is unknown, -1; the vendor numbers are text
// ("0x15b3", "4123") or, in the oldest results, numbers.
func (d *Device) UnmarshalJSON(b []byte) error {
	type plain Device
	var in struct {
		plain
		NUMANode     *int            `json:"numa_node"`
		VendorID     json.RawMessage `json:"vendor_id"`
		VendorPartID json.RawMessage `json:"vendor_part_id"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*d = Device(in.plain)
	d.NUMANode = -1
	if in.NUMANode != nil {
		d.NUMANode = *in.NUMANode
	}
	var err error
	if d.VendorID, err = vendorNumber(in.VendorID); err != nil {
		return fmt.Errorf("device vendor_id: %w", err)
	}
	if d.VendorPartID, err = vendorNumber(in.VendorPartID); err != nil {
		return fmt.Errorf("device vendor_part_id: %w", err)
	}
	return nil
}

// vendorNumber reads a vendor or part id written as text in any base
// ("0x15b3", "4123") or as a JSON number; absent or null is 0.
func vendorNumber(raw json.RawMessage) (uint32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
	} else {
		s = string(raw)
	}
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a 32-bit number", s)
	}
	return uint32(v), nil
}

// Known reports whether the result describes a device at all: results
// that predate device info, and runs that failed before a device opened,
// have none.
func (d *Device) Known() bool { return d != nil && d.Name != "" }

// Facts are the device's known facts as (name, value) pairs, named as in
// result.json, in the order reports list them: its identity
// (IdentityFacts), then what the provider added. Unknown facts (empty
// text, vendor 0, max_qp 0) are left out, but numa_node, -1 when unknown
// as the kernel says it, xrc and is_test_double are facts whenever the
// device is known.
func (d *Device) Facts() [][2]string {
	f := d.IdentityFacts()
	if f == nil {
		return nil
	}
	add := func(k, v string) { f = appendFact(f, k, v) }
	add("semantics", d.Semantics)
	add("node_guid", d.NodeGUID)
	add("library", d.Library)
	if d.MaxQP > 0 {
		add("max_qp", strconv.Itoa(d.MaxQP))
	}
	add("xrc", strconv.FormatBool(d.XRC))
	add("is_test_double", strconv.FormatBool(d.TestDouble))
	return f
}

// IdentityFacts are the facts that say which device and firmware
// measured, as a report's one line about the device gives them: name,
// fw_ver, hw_ver, vendor_id and vendor_part_id, driver, numa_node.
func (d *Device) IdentityFacts() [][2]string {
	if !d.Known() {
		return nil
	}
	var f [][2]string
	add := func(k, v string) { f = appendFact(f, k, v) }
	add("name", d.Name)
	add("fw_ver", d.FWVer)
	add("hw_ver", d.HWVer)
	if d.VendorID != 0 || d.VendorPartID != 0 {
		add("vendor_id", fmt.Sprintf("%#x", d.VendorID))
		add("vendor_part_id", strconv.FormatUint(uint64(d.VendorPartID), 10))
	}
	add("driver", d.Driver)
	add("numa_node", strconv.Itoa(d.NUMANode)) // -1: unknown, as the kernel says it
	add("legacy_flavor", d.LegacyFlavor)
	add("registrant", d.Registrant)
	// what the rdma and legacy providers moved QPs through
	if d.Port > 0 {
		add("port", strconv.Itoa(d.Port))
	}
	if d.GIDIndex != nil {
		add("gid_index", strconv.Itoa(*d.GIDIndex))
		add("gid_type", d.GIDType)
		add("gid", d.GID)
	}
	return f
}

// appendFact appends the fact k unless its value v is unknown ("").
func appendFact(f [][2]string, k, v string) [][2]string {
	if v == "" {
		return f
	}
	return append(f, [2]string{k, v})
}
