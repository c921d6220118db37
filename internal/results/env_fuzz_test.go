package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadEnv: env.json may be edited by hand or cut short. Load either
// reads it or fails with an error naming env.json; it never panics
// (upgradeEnv runs on whatever decoded).
func FuzzLoadEnv(f *testing.F) {
	f.Add(`{"run_id":"3f9a2c","kernel":"6.8.0","cpus":2}`)
	f.Add(`{"datapaths":{"flannel-cni":{"wiring":"cni","pod_network":null}}}`)
	f.Add(`{"cni":null,"engine":"kube"}`)
	f.Add(`[1,2]`)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, env string) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, StudyFile), []byte("a: 1\n"), 0o644)
		os.WriteFile(filepath.Join(dir, EnvFile), []byte(env), 0o644)
		r, err := Load(dir)
		if err != nil {
			if !strings.Contains(err.Error(), EnvFile) {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if !r.HasEnv {
			t.Fatal("env.json read but HasEnv false")
		}
	})
}
