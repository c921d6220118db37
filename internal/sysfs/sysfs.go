// Package sysfs is how cnibench reads sysfs: through a Reader, so the
// same code reads this machine's /sys, a test's fixture, or a cluster
// node's sysfs through its agent (tune.HostSysfs). The CPU idle states
// (cpuidle) and the CPU topology (topology) are read so.
package sysfs

import (
	"os"
	"path/filepath"
	"strings"
)

// Reader reads sysfs files and lists directories, by paths relative to
// the sysfs root ("devices/system/cpu/cpu0/cpuidle/state1/latency"). A
// missing file or directory is an error wrapping os.ErrNotExist.
type Reader interface {
	Read(p string) (string, error)
	List(dir string) ([]string, error)
}

// Dir reads a sysfs tree under a directory of this machine ("/sys", or a
// test's fixture).
type Dir string

// Read returns a file's content without surrounding white space.
func (d Dir) Read(p string) (string, error) {
	b, err := os.ReadFile(filepath.Join(string(d), p))
	return strings.TrimSpace(string(b)), err
}

// List returns a directory's entry names.
func (d Dir) List(dir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(string(d), dir))
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, err
}
