package kube

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// ImageFile is one file of an image: Src on this machine copied to Dst.
type ImageFile struct {
	Src, Dst string
}

// ImageSpec describes a one-layer image.
type ImageSpec struct {
	Ref   string // repo:tag, e.g. docker.io/cnibench/cnibench:dev
	Files []ImageFile
	// Symlinks maps a path in the image to its target.
	Symlinks   map[string]string
	Entrypoint []string
	Cmd        []string
	Env        []string
}

// WriteImage writes spec as a docker-archive tarball (manifest.json, the
// config JSON named by its digest, one layer.tar), the format `ctr
// images import`, `docker load` and `kind load image-archive` accept.
// Nothing needs a registry. Timestamps are fixed, so the same inputs
// give the same image ID.
func WriteImage(w io.Writer, spec ImageSpec) error {
	var layer bytes.Buffer
	if err := writeLayer(&layer, spec); err != nil {
		return err
	}
	sum := sha256.Sum256(layer.Bytes())
	diffID := hex.EncodeToString(sum[:])
	cfg := map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"created":      time.Unix(0, 0).UTC().Format(time.RFC3339),
		"config": map[string]any{
			"Env":        append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, spec.Env...),
			"Entrypoint": spec.Entrypoint,
			"Cmd":        spec.Cmd,
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + diffID}},
		"history": []map[string]any{{"created_by": "cnibench kube image"}},
	}
	cb, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	csum := sha256.Sum256(cb)
	cfgName := hex.EncodeToString(csum[:]) + ".json"
	manifest := []map[string]any{{"Config": cfgName, "RepoTags": []string{spec.Ref}, "Layers": []string{diffID + "/layer.tar"}}}
	mb, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0)
	for _, f := range []struct {
		name string
		b    []byte
	}{{cfgName, cb}, {diffID + "/layer.tar", layer.Bytes()}, {"manifest.json", mb}} {
		if dir := path.Dir(f.name); dir != "." {
			if err := tw.WriteHeader(&tar.Header{Name: dir + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch}); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.b)), ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(f.b); err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeLayer(w io.Writer, spec ImageSpec) error {
	l := &layerWriter{tw: tar.NewWriter(w), epoch: time.Unix(0, 0), dirs: map[string]bool{}}
	if err := l.base(); err != nil {
		return err
	}
	seen, err := l.files(spec.Files)
	if err != nil {
		return err
	}
	if err := l.symlinks(spec.Symlinks, seen); err != nil {
		return err
	}
	if err := l.etc(); err != nil {
		return err
	}
	return l.tw.Close()
}

// layerWriter writes the layer's tar entries, each directory once, all
// with the same time so the bytes depend only on the content.
type layerWriter struct {
	tw    *tar.Writer
	epoch time.Time
	dirs  map[string]bool
}

// mkdirs writes the directories above p not written yet.
func (l *layerWriter) mkdirs(p string) error {
	var chain []string
	for d := path.Dir(p); d != "/" && d != "." && !l.dirs[d]; d = path.Dir(d) {
		chain = append(chain, d)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		l.dirs[chain[i]] = true
		if err := l.tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(chain[i], "/") + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: l.epoch}); err != nil {
			return err
		}
	}
	return nil
}

// base writes the directories every image has, and /var/run.
func (l *layerWriter) base() error {
	for _, d := range []string{"/tmp/", "/proc/", "/sys/", "/dev/", "/etc/", "/run/netns/", "/var/"} {
		if err := l.mkdirs(d + "x"); err != nil {
			return err
		}
	}
	// As on Debian: /var/run is /run (netns tools use both names).
	if err := l.tw.WriteHeader(&tar.Header{Name: "var/run", Typeflag: tar.TypeSymlink, Linkname: "../run", Mode: 0o777, ModTime: l.epoch}); err != nil {
		return err
	}
	return nil
}

// files writes the image's files, in path order, the first of each
// destination; it returns the destinations written.
func (l *layerWriter) files(list []ImageFile) (map[string]bool, error) {
	files := append([]ImageFile{}, list...)
	sort.Slice(files, func(i, j int) bool { return files[i].Dst < files[j].Dst })
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.Dst] {
			continue
		}
		seen[f.Dst] = true
		b, err := os.ReadFile(f.Src)
		if err != nil {
			return nil, fmt.Errorf("image file %s: %w", f.Src, err)
		}
		st, err := os.Stat(f.Src)
		if err != nil {
			return nil, err
		}
		if err := l.mkdirs(f.Dst); err != nil {
			return nil, err
		}
		if err := l.tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(f.Dst, "/"), Mode: int64(st.Mode().Perm()), Size: int64(len(b)), ModTime: l.epoch}); err != nil {
			return nil, err
		}
		if _, err := l.tw.Write(b); err != nil {
			return nil, err
		}
	}
	return seen, nil
}

// symlinks writes the image's symlinks, in path order, except where a
// file was written.
func (l *layerWriter) symlinks(links map[string]string, seen map[string]bool) error {
	var names []string
	for n := range links {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if seen[n] {
			continue
		}
		if err := l.mkdirs(n); err != nil {
			return err
		}
		if err := l.tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(n, "/"), Typeflag: tar.TypeSymlink, Linkname: links[n], Mode: 0o777, ModTime: l.epoch}); err != nil {
			return err
		}
	}
	return nil
}

// etc writes the files under /etc a Debian-like image needs.
func (l *layerWriter) etc() error {
	// /etc/passwd and /etc/group so tools that look up users work (nginx's
	// workers drop root for nobody:nogroup); nsswitch.conf so glibc asks
	// /etc/hosts, then DNS, as on Debian (getent, and the tools'
	// getaddrinfo, resolve Service names through it).
	// A slice, not a map: map order would change the bytes between builds.
	for _, f := range []struct{ name, body string }{
		{"etc/group", "root:x:0:\nnogroup:x:65534:\n"},
		{"etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n"},
		{"etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
	} {
		if err := l.tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: l.epoch}); err != nil {
			return err
		}
		if _, err := io.WriteString(l.tw, f.body); err != nil {
			return err
		}
	}
	return nil
}

var lddLine = regexp.MustCompile(`(?:=>\s*)?(/\S+)\s+\(0x`)

// SharedLibs returns the shared libraries `ldd bin` lists (absolute
// paths); a static binary has none. The "--" keeps a bin that starts
// with "-" (`kube image --binary -u`) a file to ldd, not its option.
func SharedLibs(bin string) ([]string, error) {
	out, err := exec.Command("ldd", "--", bin).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "not a dynamic executable") || strings.Contains(string(out), "statically linked") {
			return nil, nil
		}
		return nil, fmt.Errorf("ldd %s: %w: %s", bin, err, out)
	}
	return ParseLdd(out), nil
}

// ParseLdd extracts library paths from ldd output.
func ParseLdd(out []byte) []string {
	var libs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := lddLine.FindStringSubmatch(sc.Text()); m != nil {
			libs = append(libs, m[1])
		}
	}
	return libs
}

// EngineTools are the programs the kube engine itself runs from its
// image: getent for the cluster DNS check and ethtool on the nodes. The
// workload programs (iperf3, nginx, taskset for pinning, perf, ...) are
// those of the drivers' descriptions (workload/registry.AllPrograms),
// which internal/app adds: the engine does not import the drivers.
var EngineTools = []spec.Program{
	{Name: "getent", Package: "libc-bin", Version: []string{"getent", "--version"}},
	{Name: "ethtool", Package: "ethtool", Version: []string{"ethtool", "--version"}},
}

// lookTool finds a program on PATH, or in the sbin directories a
// non-root PATH often lacks (nginx, nft, iptables-save live there).
func lookTool(t string) (string, error) {
	p, err := exec.LookPath(t)
	if err == nil || strings.Contains(t, "/") {
		return p, err
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		if p, lerr := exec.LookPath(filepath.Join(dir, t)); lerr == nil {
			return p, nil
		}
	}
	return "", err
}

// companions are the programs shipped beside tool t where this machine
// has them: with iptables-save, each backend's own (iptables-legacy-save,
// iptables-nft-save), both of which the agent and the iptables collector
// read to count the backend holding the node's rules (iptables.PickSave),
// where the default iptables-save, this machine's variant, sees its own
// backend alone.
func companions(t string) []string {
	if path.Base(t) != iptables.Save {
		return nil
	}
	var out []string
	for _, c := range []string{iptables.LegacySave, iptables.NftSave} {
		if p, err := lookTool(c); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// ToolImage lists a workload image: cnibench at BinPath plus the given
// tools (found on PATH) at their paths, with their shared libraries. A
// missing tool's error names its Debian package, when it has one.
func ToolImage(ref, cnibench string, tools []spec.Program) (ImageSpec, error) {
	spec := ImageSpec{Ref: ref, Files: []ImageFile{{Src: cnibench, Dst: BinPath}}, Symlinks: map[string]string{},
		Cmd: []string{BinPath, "agent", "pause"}}
	bins := []string{cnibench}
	for _, tool := range tools {
		t := tool.Name
		p, err := lookTool(t)
		if err != nil {
			hint := ""
			if tool.Package != "" {
				hint = " (Debian: apt-get install " + tool.Package + ")"
			}
			return spec, fmt.Errorf("image: %s not found on this machine%s, or leave it out with --tool: %w", t, hint, err)
		}
		for _, f := range append([]string{p}, companions(t)...) {
			spec.Files = append(spec.Files, ImageFile{Src: f, Dst: f})
			bins = append(bins, f)
		}
		if strings.HasPrefix(path.Base(t), "iptables") || strings.HasPrefix(path.Base(t), "ip6tables") {
			// Match and target extensions are loaded at run time.
			mods, _ := filepath.Glob("/usr/lib/*/xtables/*.so")
			more, _ := filepath.Glob("/usr/lib/xtables/*.so")
			for _, m := range append(mods, more...) {
				spec.Files = append(spec.Files, ImageFile{Src: m, Dst: m})
				bins = append(bins, m)
			}
		}
	}
	for _, b := range bins {
		libs, err := SharedLibs(b)
		if err != nil {
			return spec, err
		}
		for _, l := range libs {
			spec.Files = append(spec.Files, ImageFile{Src: l, Dst: l})
		}
	}
	return spec, nil
}
