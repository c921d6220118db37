package tune

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// fakeFS is an in-memory kernel: values by namespace, fs and path. Like the
// kernel it prints masks without zero padding, so tests see the same
// text/meaning gap the real one has.
type fakeFS struct {
	mu     sync.Mutex
	vals   map[string]string // key(ns, fs, path)
	gone   map[string]bool   // deleted namespaces
	failAt map[string]error  // the next write to this path fails
	round  map[string]bool   // the next value written to this path is changed
	// minOne are vectors of ints each at least 1 (tcp_rmem): a write is
	// stored field by field up to the first bad one, which fails it, as
	// the kernel's __do_proc_dointvec does.
	minOne map[string]bool
	// readOnly are files a namespace shows 0444, as a child namespace
	// shows nf_conntrack_max: a write fails with EACCES.
	readOnly map[string]bool // key(ns, fs, path)
	writes   []string        // "ns fs:path=value", in order
}

func newFake() *fakeFS {
	return &fakeFS{vals: map[string]string{}, gone: map[string]bool{}, failAt: map[string]error{}, round: map[string]bool{}, minOne: map[string]bool{}, readOnly: map[string]bool{}}
}

func key(ns, fs, p string) string { return ns + "|" + fs + "|" + p }

// addDev creates a device with n receive queues, each with the kernel's
// defaults.
func (f *fakeFS) addDev(ns, dev string, n int) {
	for i := 0; i < n; i++ {
		q := fmt.Sprintf("class/net/%s/queues/rx-%d", dev, i)
		f.vals[key(ns, FSSysfs, q+"/rps_cpus")] = "0"
		f.vals[key(ns, FSSysfs, q+"/rps_flow_cnt")] = "0"
	}
	f.vals[key(ns, FSSysfs, fmt.Sprintf("class/net/%s/queues/tx-0/xps_cpus", dev))] = "0"
}

func (f *fakeFS) get(ns, fs, p string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.vals[key(ns, fs, p)]
}

func (f *fakeFS) Read(ns, fs, p string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone[ns] {
		return "", fmt.Errorf("netns %s: %w", ns, ErrGone)
	}
	v, ok := f.vals[key(ns, fs, p)]
	if !ok && fs == FSProc {
		// As LocalFS: the namespace does not show this sysctl.
		return "", fmt.Errorf("%s: %w", p, ErrNoSysctl)
	}
	if !ok {
		return "", fmt.Errorf("%s: no such file", p)
	}
	return v, nil
}

func (f *fakeFS) Write(ns, fs, p, v string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone[ns] {
		return fmt.Errorf("netns %s: %w", ns, ErrGone)
	}
	if err := f.failAt[p]; err != nil {
		delete(f.failAt, p) // once: the undo of a failed write works
		return err
	}
	k := key(ns, fs, p)
	if _, ok := f.vals[k]; !ok {
		return fmt.Errorf("%s: no such file", p)
	}
	if f.readOnly[k] {
		return fmt.Errorf("open %s: %w", p, syscall.EACCES)
	}
	if path.Base(p) == "rps_cpus" {
		v = strings.TrimLeft(strings.ReplaceAll(v, ",", ""), "0")
		if v == "" {
			v = "0"
		}
	}
	if f.minOne[p] {
		return f.writeVector(k, v)
	}
	if f.round[p] {
		delete(f.round, p) // once, like failAt
		v += "0"
	}
	f.vals[k] = v
	f.writes = append(f.writes, Change{Netns: ns, FS: fs, Path: p, Value: v}.String())
	return nil
}

// Writable is LocalFS's: whether the file's mode lets root write it.
func (f *fakeFS) Writable(ns, fs, p string) (bool, error) {
	if _, err := f.Read(ns, fs, p); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.readOnly[key(ns, fs, p)], nil
}

func (f *fakeFS) List(ns, fs, dir string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone[ns] {
		return nil, fmt.Errorf("netns %s: %w", ns, ErrGone)
	}
	seen := map[string]bool{}
	prefix := key(ns, fs, dir) + "/"
	for k := range f.vals {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			seen[strings.SplitN(rest, "/", 2)[0]] = true
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, os.ErrNotExist) // as LocalFS
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// snapshot copies every value.
func (f *fakeFS) snapshot() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for k, v := range f.vals {
		out[k] = v
	}
	return out
}

// writeVector stores v's fields over the vector at k one by one and stops
// at the first that is not an integer of at least 1, failing with EINVAL
// and leaving the fields before it written.
func (f *fakeFS) writeVector(k, v string) error {
	cur := strings.Fields(f.vals[k])
	for i, field := range strings.Fields(v) {
		n, err := strconv.Atoi(field)
		if err != nil || n < 1 || i >= len(cur) {
			f.vals[k] = strings.Join(cur, "\t")
			return fmt.Errorf("write %s: %w", k, syscall.EINVAL)
		}
		cur[i] = field
	}
	f.vals[k] = strings.Join(cur, "\t")
	return nil
}
