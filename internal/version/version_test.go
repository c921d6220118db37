package version

import (
	"runtime/debug"
	"testing"
)

// TestResolve: a build without -ldflags is known by its commit (a
// version every such build shared, "dev", made the resume and compare
// checks empty), with -dirty for uncommitted changes; an -ldflags value
// and a module version win; without build information it stays "dev".
func TestResolve(t *testing.T) {
	vcs := func(main string, kv ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/cnibench/cnibench", Version: main}}
			for i := 0; i+1 < len(kv); i += 2 {
				info.Settings = append(info.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
			}
			return info, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct {
		name, v string
		read    func() (*debug.BuildInfo, bool)
		want    string
	}{
		{"ldflags", "v0.1.0", vcs("(devel)", "vcs.revision", rev), "v0.1.0"},
		{"clean checkout", "dev", vcs("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "dev-0123456789ab"},
		{"dirty checkout", "dev", vcs("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "dev-0123456789ab-dirty"},
		{"go install @version", "dev", vcs("v1.2.3"), "v1.2.3"},
		// Go 1.24 and later stamp a checkout's build with a pseudo-version.
		{"pseudo-version", "dev", vcs("v0.0.0-20261205120716-747742de69f9+dirty", "vcs.revision", rev), "v0.0.0-20261205120716-747742de69f9+dirty"},
		{"no vcs stamp", "dev", vcs("(devel)", "-buildmode", "exe"), "dev"},
		{"no build information", "dev", none, "dev"},
	} {
		if got := resolve(c.v, c.read); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestNames: only a release or a clean commit's build names one build.
func TestNames(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.1.0": true, "dev-0123456789ab": true, "v0.0.0-20261206043634-c5a8e45658cd": true,
		"dev": false, "": false, "dev-0123456789ab-dirty": false, "v0.0.0-20261206043634-c5a8e45658cd+dirty": false,
	} {
		if got := Names(v); got != want {
			t.Errorf("Names(%q) = %v, want %v", v, got, want)
		}
	}
}
