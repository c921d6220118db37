package kube

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/cnibench/cnibench/internal/tune"
)

type memFS struct {
	mu   sync.Mutex
	vals map[string]string
}

func newMemFS() *memFS { return &memFS{vals: map[string]string{}} }

func mk(ns, fs, p string) string { return ns + "|" + fs + "|" + p }

func (f *memFS) set(ns, fs, p, v string) { f.vals[mk(ns, fs, p)] = v }
func (f *memFS) get(ns, fs, p string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.vals[mk(ns, fs, p)]
}

func (f *memFS) Read(ns, fs, p string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.vals[mk(ns, fs, p)]
	if !ok {
		return "", fmt.Errorf("%s: %w", p, os.ErrNotExist)
	}
	return v, nil
}

func (f *memFS) Write(ns, fs, p, v string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.vals[mk(ns, fs, p)]; !ok {
		return fmt.Errorf("%s: %w", p, tune.ErrGone)
	}
	f.vals[mk(ns, fs, p)] = v
	return nil
}

func (f *memFS) List(ns, fs, dir string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	for k := range f.vals {
		if rest, ok := strings.CutPrefix(k, mk(ns, fs, dir)+"/"); ok {
			seen[strings.SplitN(rest, "/", 2)[0]] = true
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}
