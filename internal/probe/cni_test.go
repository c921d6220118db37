package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeCNIEnv makes the test binary act as a CNI plugin (see TestMain):
// "speaks-1.0.0", "speaks-0.3.1", "fails" or "garbage".
const fakeCNIEnv = "CNIBENCH_PROBE_FAKE_CNI"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeCNIEnv); mode != "" {
		os.Exit(fakePlugin(mode))
	}
	if root := os.Getenv(rfsHelperEnv); root != "" {
		os.Exit(rfsHelper(root))
	}
	if arg := os.Getenv(sysctlHelperEnv); arg != "" {
		os.Exit(sysctlHelper(arg))
	}
	if name := os.Getenv(readOnlyProcSysEnv); name != "" {
		os.Exit(readOnlyProcSysHelper(name))
	}
	os.Exit(m.Run())
}

// fakePlugin answers CNI_COMMAND=VERSION the way the mode says.
func fakePlugin(mode string) int {
	if os.Getenv("CNI_COMMAND") != "VERSION" {
		fmt.Fprintln(os.Stderr, "fake plugin: called without CNI_COMMAND=VERSION")
		return 3
	}
	switch mode {
	case "speaks-1.0.0":
		fmt.Println(`{"cniVersion":"1.0.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0"]}`)
	case "speaks-0.3.1":
		fmt.Println(`{"cniVersion":"0.3.1","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1"]}`)
	case "garbage":
		fmt.Println("CNI bridge plugin version unknown")
	default:
		fmt.Fprintln(os.Stderr, "fake plugin: broken on purpose")
		return 1
	}
	return 0
}

// installFake links the test binary into dir under the plugin's name.
func installFake(t *testing.T, dir, plugin string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(dir, plugin)); err != nil {
		t.Fatal(err)
	}
}

func TestProbeCNIPlugin(t *testing.T) {
	empty, dir := t.TempDir(), t.TempDir()
	installFake(t, dir, "bridge")
	path := []string{empty, dir}
	for _, tt := range []struct {
		mode   string
		plugin string
		ok     bool
		detail string
	}{
		{"speaks-1.0.0", "bridge", true, "at " + filepath.Join(dir, "bridge") + " (CNI 0.1.0, 0.2.0, 0.3.0, 0.3.1, 0.4.0, 1.0.0)"},
		{"speaks-0.3.1", "bridge", false, "speaks CNI 0.1.0, 0.2.0, 0.3.0, 0.3.1; cnibench needs 1.0.0"},
		{"fails", "bridge", false, "is installed but CNI_COMMAND=VERSION " + filepath.Join(dir, "bridge") + " failed: fake plugin: broken on purpose"},
		{"garbage", "bridge", false, "not a CNI version answer"},
		{"speaks-1.0.0", "macvlan", false, "not in " + empty + ":" + dir + " (set CNI_PATH to look elsewhere); install it: apt-get install containernetworking-plugins"},
	} {
		t.Run(tt.mode+"-"+tt.plugin, func(t *testing.T) {
			t.Setenv(fakeCNIEnv, tt.mode)
			r := probeCNIPlugin(context.Background(), tt.plugin, path)
			if r.Name != "cni-"+tt.plugin || r.Kind != KindCNIPlugin || !r.Optional {
				t.Errorf("result %+v: want name cni-%s, kind %s, optional", r, tt.plugin, KindCNIPlugin)
			}
			if r.OK != tt.ok || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("ok=%v detail %q\nwant ok=%v, detail containing %q", r.OK, r.Detail, tt.ok, tt.detail)
			}
		})
	}
}

func TestRequireCNIPlugins(t *testing.T) {
	dir := t.TempDir()
	installFake(t, dir, "bridge")
	installFake(t, dir, "host-local")
	t.Setenv(fakeCNIEnv, "speaks-1.0.0")
	if err := RequireCNIPlugins(context.Background(), []string{dir}, "bridge", "host-local"); err != nil {
		t.Errorf("both present: %v", err)
	}
	err := RequireCNIPlugins(context.Background(), []string{dir}, "bridge", "ipvlan", "host-local")
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Name != "cni-ipvlan" || !strings.HasPrefix(err.Error(), "CNI plugin ipvlan is not available: not in "+dir) {
		t.Errorf("ipvlan missing: %v", err)
	}
}

func TestParseCNIVersion(t *testing.T) {
	v, err := parseCNIVersion([]byte(`{"cniVersion":"1.0.0","supportedVersions":["0.4.0","1.0.0"]}`))
	if err != nil || !slices.Equal(v, []string{"0.4.0", "1.0.0"}) {
		t.Errorf("parse = %v, %v", v, err)
	}
	for _, bad := range []string{``, `CNI bridge plugin v1.1.1`, `{"cniVersion":"1.0.0"}`} {
		if _, err := parseCNIVersion([]byte(bad)); err == nil {
			t.Errorf("parse(%q) succeeded", bad)
		}
	}
}

func TestCNIPath(t *testing.T) {
	t.Setenv("CNI_PATH", "/a::/b")
	if got := CNIPath(); !slices.Equal(got, []string{"/a", "/b"}) {
		t.Errorf("CNI_PATH=/a::/b: %v", got)
	}
	t.Setenv("CNI_PATH", "")
	if got := CNIPath(); !slices.Equal(got, DefaultCNIPath) {
		t.Errorf("CNI_PATH unset: %v, want %v", got, DefaultCNIPath)
	}
}

func TestRequireCNIPluginMessage(t *testing.T) {
	res := []Result{{Name: CNIPlugin("ipvlan"), Kind: KindCNIPlugin, Detail: "not in /opt/cni/bin"}}
	err := require(res, []string{CNIPlugin("ipvlan")})
	if err == nil || err.Error() != "CNI plugin ipvlan is not available: not in /opt/cni/bin" {
		t.Errorf("require = %v", err)
	}
}

// TestCNIPluginsHere probes the plugins installed on this machine: one
// that is there must answer (a broken install fails the test); missing
// ones are only logged.
func TestCNIPluginsHere(t *testing.T) {
	res := cniProbes(context.Background())
	logTable(t, res)
	if len(res) != len(cniPlugins) {
		t.Fatalf("%d results for %d plugins", len(res), len(cniPlugins))
	}
	for _, r := range res {
		plugin := strings.TrimPrefix(r.Name, "cni-")
		if bin := findExecutable(plugin, CNIPath()); bin != "" && !r.OK {
			t.Errorf("%s is installed at %s but the probe says: %s", plugin, bin, r.Detail)
		}
	}
}
