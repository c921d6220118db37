// Package version holds the build's version string, set with
// -ldflags "-X github.com/cnibench/cnibench/internal/version.Version=v0.1.0".
package version

// Version of this build.
var Version = "dev"
