package host

import (
	"runtime/debug"
	"testing"
)

// What a build is named: the link-time version, a release from Go's build
// information (go install ...@v1.2.3), the VCS revision, a pseudo-version,
// or "unknown", in that order.
func TestVersionOf(t *testing.T) {
	const rev = "0e5f952abcdef0123456789abcdef0123456789a"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	info := func(version string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/xrcbench/xrcbench", Version: version}, Settings: settings}
	}
	tests := []struct {
		name   string
		linked string
		bi     *debug.BuildInfo
		want   string
	}{
		{"make build: git describe at link time", "v1.2.3-4-g0e5f952-dirty", info("(devel)", vcs("true")), "v1.2.3-4-g0e5f952-dirty"},
		{"go install @v1.2.3: no VCS information", "", info("v1.2.3", nil), "v1.2.3"},
		{"go install @v2.0.0-rc.1", "", info("v2.0.0-rc.1", nil), "v2.0.0-rc.1"},
		{"go build of a checkout at a tag", "", info("v1.2.3", vcs("false")), "v1.2.3"},
		{"go build of a modified checkout at a tag", "", info("v1.2.3+dirty", vcs("true")), "v1.2.3+dirty"},
		{"go build past a tag: pseudo-version, the revision", "", info("v1.2.4-0.20261202005000-0e5f952abcde", vcs("false")), "0e5f952abcde"},
		{"go build, modified, past a tag", "", info("v1.2.4-0.20261202005000-0e5f952abcde+dirty", vcs("true")), "0e5f952abcde+dirty"},
		{"go build without a module version", "", info("(devel)", vcs("false")), "0e5f952abcde"},
		{"go install @commit: pseudo-version without VCS", "", info("v0.0.0-20261202005000-0e5f952abcde", nil), "v0.0.0-20261202005000-0e5f952abcde"},
		{"-buildvcs=false in a checkout", "", info("(devel)", nil), "unknown"},
		{"no build information", "", nil, "unknown"},
	}
	for _, tt := range tests {
		if got := versionOf(tt.linked, tt.bi); got != tt.want {
			t.Errorf("%s: versionOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}
