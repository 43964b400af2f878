package bench

import (
	"reflect"
	"testing"
)

// Only what changes a measurement through the test double is recorded
// as the command's environment, the last of each name, sorted.
func TestMeasuredEnv(t *testing.T) {
	got := MeasuredEnv([]string{"HOME=/root", "XRCBENCH_FAKEVERBS_COST=reg=1us", "LD_LIBRARY_PATH=/a",
		"XRCBENCH_FAKEVERBS_DIR=/tmp/x", "XRCBENCH_FAKEVERBS_COST=reg=2us", "XRCBENCH_FAKEVERBS_DEVICES=xbfake0", "XRCBENCH_TEST_WORKER=1"})
	want := []string{"LD_LIBRARY_PATH=/a", "XRCBENCH_FAKEVERBS_COST=reg=2us", "XRCBENCH_FAKEVERBS_DEVICES=xbfake0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MeasuredEnv = %q, want %q", got, want)
	}
}
