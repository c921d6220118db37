package probe

import "testing"

// FuzzParseCNIVersion: a plugin's VERSION answer is a foreign program's
// output; an accepted answer always names at least one version.
func FuzzParseCNIVersion(f *testing.F) {
	f.Add([]byte(`{"cniVersion":"1.0.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0"]}`))
	f.Add([]byte(`{"cniVersion":"1.0.0"}`))
	f.Add([]byte(`{"supportedVersions":null}`))
	f.Add([]byte("CNI bridge plugin v1.4.0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseCNIVersion(b)
		if err == nil && len(v) == 0 {
			t.Fatalf("accepted %q without versions", b)
		}
	})
}
