package kube

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/workload/spec"
)

func TestWriteImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "cnibench")
	os.WriteFile(bin, []byte("#!/bin/true\n"), 0o755)
	var buf bytes.Buffer
	spec := ImageSpec{Ref: "docker.io/x/y:1", Files: []ImageFile{{Src: bin, Dst: BinPath}}, Cmd: []string{BinPath, "agent", "pause"}}
	if err := WriteImage(&buf, spec); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(buf.Bytes()))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = b
	}
	var man []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &man); err != nil || len(man) != 1 {
		t.Fatalf("manifest: %v %s", err, files["manifest.json"])
	}
	if man[0].RepoTags[0] != "docker.io/x/y:1" {
		t.Errorf("tags %v", man[0].RepoTags)
	}
	var cfg struct {
		Config struct{ Cmd []string }
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(files[man[0].Config], &cfg); err != nil {
		t.Fatal(err)
	}
	layer := files[man[0].Layers[0]]
	sum := sha256.Sum256(layer)
	if cfg.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Error("diff_id does not match the layer")
	}
	csum := sha256.Sum256(files[man[0].Config])
	if man[0].Config != hex.EncodeToString(csum[:])+".json" {
		t.Error("config is not named by its digest")
	}
	if strings.Join(cfg.Config.Cmd, " ") != BinPath+" agent pause" {
		t.Errorf("cmd %v", cfg.Config.Cmd)
	}
	names := map[string]byte{}
	lr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := lr.Next()
		if err != nil {
			break
		}
		names[h.Name] = h.Typeflag
	}
	for _, want := range []string{"usr/local/bin/cnibench", "run/netns/", "tmp/", "etc/passwd", "etc/nsswitch.conf"} {
		if _, ok := names[want]; !ok {
			t.Errorf("layer lacks %s", want)
		}
	}
	if names["var/run"] != tar.TypeSymlink {
		t.Error("/var/run is not a symlink to /run")
	}
	// Deterministic: the same inputs give the same bytes.
	var again bytes.Buffer
	WriteImage(&again, spec)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("image is not reproducible")
	}
}

func TestParseLdd(t *testing.T) {
	out := []byte("\tlinux-vdso.so.1 (0x00007ffd)\n\tlibiperf.so.0 => /lib/x86_64-linux-gnu/libiperf.so.0 (0x00007f1)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f3)\n")
	got := strings.Join(ParseLdd(out), ",")
	want := "/lib/x86_64-linux-gnu/libiperf.so.0,/lib/x86_64-linux-gnu/libc.so.6,/lib64/ld-linux-x86-64.so.2"
	if got != want {
		t.Errorf("ParseLdd = %s", got)
	}
}

func FuzzParseLdd(f *testing.F) {
	f.Add([]byte("\tlibc.so.6 => /lib/libc.so.6 (0x1)\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, l := range ParseLdd(b) {
			if !strings.HasPrefix(l, "/") {
				t.Fatalf("relative path %q", l)
			}
		}
	})
}

func TestToolImageMissingTool(t *testing.T) {
	for _, tool := range EngineTools {
		if err := tool.Check(); err != nil {
			t.Errorf("engine tool: %v", err)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, err = ToolImage("x:y", bin, []spec.Program{{Name: "cnibench-no-such-tool"}})
	if err == nil || !strings.Contains(err.Error(), "cnibench-no-such-tool not found on this machine") {
		t.Errorf("missing tool: %v", err)
	}
	if _, err := ToolImage("x:y", bin, []spec.Program{{Name: "nft", Package: "nftables"}}); err != nil && !strings.Contains(err.Error(), "apt-get install nftables") {
		t.Errorf("missing nft does not name its package: %v", err)
	}
}

// A binary whose name starts with "-" is a file to ldd, not its option:
// `ldd -v` (verbose, then no file) failed.
func TestSharedLibsDashName(t *testing.T) {
	if _, err := exec.LookPath("ldd"); err != nil {
		t.Skip("no ldd on this machine")
	}
	src, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true on this machine")
	}
	libs, err := SharedLibs(src)
	if err != nil || len(libs) == 0 {
		t.Skipf("%s: no shared libraries to compare (%v)", src, err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "-v"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	got, err := SharedLibs("-v")
	if err != nil || strings.Join(got, ",") != strings.Join(libs, ",") {
		t.Errorf("SharedLibs(-v) = %v, %v; want %s's %v", got, err, src, libs)
	}
}

// The image ships both iptables backends' iptables-save beside the
// default one, where this machine has them: the agent and the iptables
// collector read the backend holding a node's rules, which the build
// machine's default variant need not be.
func TestToolImageShipsIptablesBackends(t *testing.T) {
	var want []string
	for _, c := range []string{"iptables-legacy-save", "iptables-nft-save"} {
		if p, err := lookTool(c); err == nil {
			want = append(want, p)
		}
	}
	if _, err := lookTool("iptables-save"); err != nil || len(want) == 0 {
		t.Skip("no iptables-save and backend programs on this machine")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	img, err := ToolImage("x:y", bin, []spec.Program{{Name: "iptables-save", Package: "iptables"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !slices.ContainsFunc(img.Files, func(f ImageFile) bool { return f.Dst == w }) {
			t.Errorf("image lacks %s", w)
		}
	}
}
