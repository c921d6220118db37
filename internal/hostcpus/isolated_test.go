package hostcpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Isolated joins isolcpus and nohz_full; an absent file, an empty one
// and nohz_full's "(null)" name none.
func TestIsolated(t *testing.T) {
	for _, c := range []struct {
		name           string
		isolated, nohz string // "-" for absent
		want           string
	}{
		{"none", "-", "-", ""},
		{"empty", "\n", "(null)\n", ""},
		{"isolcpus", "2-3\n", "\n", "2-3"},
		{"both", "3\n", "1,3\n", "1,3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "devices/system/cpu")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for f, v := range map[string]string{"isolated": c.isolated, "nohz_full": c.nohz} {
				if v != "-" {
					if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, err := Isolated(root)
			if err != nil || got.String() != c.want {
				t.Errorf("Isolated = %q, %v; want %q", got.String(), err, c.want)
			}
		})
	}
}
