package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

const rmem = "/proc/sys/net/ipv4/tcp_rmem"

// vectorFS is a memFS whose tcp_rmem the kernel stores field by field,
// up to the first value under 1, which fails the write
// (__do_proc_dointvec with a minimum): "8192 262144 0" over "4096 131072
// 6291456" leaves "8192 262144 6291456".
type vectorFS struct{ *memFS }

func (f vectorFS) Write(ns, fsKind, p, v string) error {
	if p != rmem {
		return f.memFS.Write(ns, fsKind, p, v)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k := key(ns, fsKind, p)
	cur := strings.Fields(f.vals[k])
	defer func() { f.vals[k] = strings.Join(cur, "\t") }()
	for i, field := range strings.Fields(v) {
		if n, err := strconv.Atoi(field); err != nil || n < 1 || i >= len(cur) {
			return fmt.Errorf("write %s: invalid argument", p)
		}
		cur[i] = field
	}
	return nil
}

func vectorNode() vectorFS {
	mem := testNode()
	mem.vals[key("", "proc", rmem)] = "4096\t131072\t6291456"
	return vectorFS{mem}
}

// TestFailedWriteLeftHalfMade: a write the kernel refuses part way still
// changed the knob; the session keeps it as its own (before, "nothing
// changed": the entry was closed and the knob left changed for good), so
// its end puts the old value back and retires its journal. Likewise for
// a second write of a knob already changed.
func TestFailedWriteLeftHalfMade(t *testing.T) {
	for _, writes := range [][]string{{"8192 262144 0"}, {"8192 262144 6291456", "16384 524288 0"}} {
		t.Run(strings.Join(writes, ", then "), func(t *testing.T) {
			fs := vectorNode()
			dir := t.TempDir()
			srv := NewServer(Config{Run: "half", FS: fs, Pods: fakePods{}, JournalDir: dir})
			for i, v := range writes {
				err := srv.write("", "proc", rmem, v)
				if last := i == len(writes)-1; (err != nil) != last {
					t.Fatalf("write %q = %v", v, err)
				}
			}
			if got := fs.vals[key("", "proc", rmem)]; strings.HasPrefix(got, "4096") {
				t.Fatalf("tcp_rmem = %q: the refused write changed nothing; the test needs a half-made one", got)
			}
			if n, err := srv.Revert(); err != nil || n != 1 {
				t.Fatalf("Revert = %d, %v; want the half-made value put back", n, err)
			}
			if got := fs.vals[key("", "proc", rmem)]; got != "4096\t131072\t6291456" {
				t.Errorf("tcp_rmem = %q after revert, want the old 4096 131072 6291456", got)
			}
			if err := srv.closeJournal(); err != nil {
				t.Errorf("close journal: %v", err)
			}
			if files, _ := filepath.Glob(filepath.Join(dir, "*"+journal.Ext)); len(files) != 0 {
				t.Errorf("journal left: %v", files)
			}
		})
	}
}

// TestReplayOfAHalfMadeWrite: a session killed after a write that failed
// half-way leaves a journal whose replay restores the knob (before, the
// value was neither old nor the session's: "changed by someone else").
func TestReplayOfAHalfMadeWrite(t *testing.T) {
	fs := vectorNode()
	dir := t.TempDir()
	srv := NewServer(Config{Run: "crash", FS: fs, Pods: fakePods{}, JournalDir: dir})
	if err := srv.write("", "proc", rmem, "8192 262144 0"); err == nil {
		t.Fatal("refused write succeeded")
	}
	path := srv.j.Path()
	srv.j.Close() // keeps the file: an entry is pending
	srv.j = nil
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	own := fmt.Sprintf(`"pid":%d,`, os.Getpid())
	os.WriteFile(path, []byte(strings.Replace(string(b), own, `"pid":1073741824,`, 1)), 0o600)
	sum, err := Replay(dir, &nodeFS{base: fs, pods: fakePods{}})
	if err != nil || sum.Restored != 1 || len(sum.Changed) != 0 {
		t.Fatalf("replay = %+v, %v; want the half-made value restored", sum, err)
	}
	if got := fs.vals[key("", "proc", rmem)]; got != "4096\t131072\t6291456" {
		t.Errorf("tcp_rmem = %q after replay, want the old 4096 131072 6291456", got)
	}
}
