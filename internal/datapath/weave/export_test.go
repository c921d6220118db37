package weave

import "testing"

// CountModeProbes makes picking a mode count the picks, and pick bridge
// mode without probing, until the test ends; it returns the count.
func CountModeProbes(t testing.TB) *int {
	t.Helper()
	n := new(int)
	saved := pickMode
	pickMode = func() string { *n++; return ModeBridge }
	t.Cleanup(func() { pickMode = saved })
	return n
}
