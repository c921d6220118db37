// Package version holds the build's version string, set with
// -ldflags "-X github.com/cnibench/cnibench/internal/version.Version=v0.1.0".
//
// Without it, a plain `go build` of a git checkout (make build,
// scripts/setup.sh) is known by the commit it was built from, which Go
// stamps into the binary: env.json records the version, `run --resume`
// refuses another build, and `compare` lists a difference, all of which
// said nothing while every such build was "dev".
package version

import (
	"runtime/debug"
	"strings"
)

// Version of this build: the -ldflags value; else the module version Go
// stamped (a `go install ...@v1.2.3`'s, or since Go 1.24 a checkout's
// pseudo-version, "v0.0.0-20261205120716-747742de69f9+dirty"); else
// "dev-" and the first 12 digits of
// the commit, with "-dirty" when the tree had uncommitted changes (two
// dirty builds of one commit read alike); "dev" where none is known (go
// test, -buildvcs=false, a build outside git).
var Version = "dev"

func init() { Version = resolve(Version, debug.ReadBuildInfo) }

// resolve is the version of a build whose -ldflags value is v, from the
// build information read returns.
func resolve(v string, read func() (*debug.BuildInfo, bool)) string {
	if v != "dev" {
		return v
	}
	info, ok := read()
	if !ok || info == nil {
		return v
	}
	if m := info.Main.Version; m != "" && m != "(devel)" {
		return m
	}
	rev, modified := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	v = "dev-" + rev[:min(len(rev), 12)]
	if modified {
		v += "-dirty"
	}
	return v
}

// Names reports whether v names one build: not "dev" (built without its
// commit, e.g. -buildvcs=false or a tarball) and not "-dirty" or
// "+dirty" (built with uncommitted changes: resolve's suffix, and the one
// Go puts on the module version it derives from a modified checkout). Two runs whose versions are equal but do not name
// one build may still come from different code.
func Names(v string) bool {
	return v != "" && v != "dev" && !strings.HasSuffix(v, "-dirty") && !strings.HasSuffix(v, "+dirty")
}
