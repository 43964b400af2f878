// Package qualify runs a firmware qualification: a plan (YAML) of
// conformance checks, benchmark runs and criteria, judged absolutely and
// against a baseline qualification with compare's test, written as
// qualification.json, junit.xml and qualification.html. It drives the
// engine (bench) and judges with the report package; cmd/xrcbench's
// `qualify` is its command line.
//
// Its one concern is the verdict on a firmware: it owns no measuring and
// no statistics of its own. Conformance comes from conform, live QPs from
// device.
package qualify
