package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Writer records a run's raw files in a run directory so that a crash (or
// power loss) loses nothing that was finished: every appended line is
// written with a single write call and fsynced before Append returns, and
// whole files (study.yaml, env.json) are replaced atomically by rename.
//
// A Writer is safe for concurrent use (the CPU sampler and the trial loop
// may append from different goroutines). After a failed write it refuses
// further appends: a partial line followed by more lines would turn a
// tolerable truncated tail into a corrupt middle line (see Load).
type Writer struct {
	dir string
	// made: Create made dir (DiscardUnrecorded removes only a directory
	// the run made, never one the user gave empty).
	made bool

	mu      sync.Mutex
	samples *os.File
	cpu     *os.File
	err     error // sticky: first failed append or close
	closed  bool
}

// ErrRunExists is returned by Create when the directory already holds the
// raw files of a run; a new run never appends to an old one.
var ErrRunExists = errors.New("directory already holds a run")

// Create makes dir (and its parents) and opens samples.jsonl and cpu.jsonl
// for appending. It fails with ErrRunExists if either already exists.
func Create(dir string) (*Writer, error) {
	_, serr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	w := &Writer{dir: dir, made: errors.Is(serr, os.ErrNotExist)}
	var err error
	if w.samples, err = createExcl(filepath.Join(dir, SamplesFile)); err != nil {
		return nil, err
	}
	if w.cpu, err = createExcl(filepath.Join(dir, CPUFile)); err != nil {
		w.samples.Close()
		return nil, err
	}
	// The new directory entries must survive a crash too.
	if err := syncDir(dir); err != nil {
		w.samples.Close()
		w.cpu.Close()
		return nil, err
	}
	return w, nil
}

// Reopen opens an existing run's samples.jsonl and cpu.jsonl to append
// to (cnibench run --resume). A last line without its newline is what a
// kill during an append leaves. If it parses, the write was complete but
// for the newline, and Load counts it (--resume then skips its trial):
// the newline is added, so the trial stays counted. If it does not
// parse, it is cut off, as Load drops it, so the next line starts on a
// line of its own. CPU points of a trial samples.jsonl does not count
// are removed: the trial runs again (uncounted.go), and so are the
// temporary files a kill during WriteFileAtomic left (removeTempLeftovers).
func Reopen(dir string) (*Writer, error) {
	if err := removeTempLeftovers(dir); err != nil {
		return nil, err
	}
	w := &Writer{dir: dir}
	var err error
	if w.samples, err = openTrimmed(filepath.Join(dir, SamplesFile)); err != nil {
		return nil, err
	}
	if err := dropUncountedCPU(dir); err != nil {
		w.samples.Close()
		return nil, err
	}
	if w.cpu, err = openTrimmed(filepath.Join(dir, CPUFile)); err != nil {
		w.samples.Close()
		return nil, err
	}
	return w, nil
}

func openTrimmed(path string) (*os.File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	keep := bytes.LastIndexByte(b, '\n') + 1
	tail := b[keep:]
	complete := len(bytes.TrimSpace(tail)) > 0 && completeLine(tail)
	if keep < len(b) && !complete {
		if err := os.Truncate(path, int64(keep)); err != nil {
			return nil, fmt.Errorf("resume: cut the partial last line of %s: %w", filepath.Base(path), err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if complete {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Close()
			return nil, fmt.Errorf("resume: end the last line of %s: %w", filepath.Base(path), err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	return f, nil
}

// completeLine reports whether an unterminated last line is one Load
// keeps: a whole JSON object (decodeLine's test, without the type, which
// Reopen does not know; a line of the wrong shape fails Load either way).
func completeLine(line []byte) bool {
	line = bytes.TrimSpace(line)
	return len(line) > 0 && line[0] == '{' && json.Valid(line)
}

func createExcl(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s: %w (choose a new directory)", path, ErrRunExists)
	}
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Base(path), err)
	}
	return f, nil
}

// Dir returns the run directory.
func (w *Writer) Dir() string { return w.dir }

// WriteStudy stores the resolved study (YAML) as study.yaml.
func (w *Writer) WriteStudy(yaml []byte) error {
	return WriteFileAtomic(filepath.Join(w.dir, StudyFile), yaml)
}

// WriteStops replaces stops.json.
func (w *Writer) WriteStops(stops []Stop) error {
	b, err := json.MarshalIndent(stops, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(w.dir, StopsFile), append(b, '\n'))
}

// WriteEnv stores env.json.
func (w *Writer) WriteEnv(env Env) error {
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return fmt.Errorf("encode env: %w", err)
	}
	return WriteFileAtomic(filepath.Join(w.dir, EnvFile), append(b, '\n'))
}

// AppendSample appends one line to samples.jsonl and syncs it to disk.
func (w *Writer) AppendSample(s Sample) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode sample %+v trial %d: %w", s.Cell, s.Trial, err)
	}
	return w.append(w.samples, SamplesFile, append(b, '\n'))
}

// AppendCPU appends one line per point to cpu.jsonl and syncs once.
func (w *Writer) AppendCPU(points []CPUPoint) error {
	if len(points) == 0 {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // Encode ends every value with '\n'
	for _, p := range points {
		if err := enc.Encode(p); err != nil {
			return fmt.Errorf("encode CPU point: %w", err)
		}
	}
	return w.append(w.cpu, CPUFile, buf.Bytes())
}

func (w *Writer) append(f *os.File, name string, b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("append %s: %w", name, os.ErrClosed)
	}
	if w.err != nil {
		return fmt.Errorf("append %s: earlier write failed: %w", name, w.err)
	}
	if _, err := f.Write(b); err != nil {
		w.err = err
		return fmt.Errorf("append %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		w.err = err
		return fmt.Errorf("sync %s: %w", name, err)
	}
	return nil
}

// Close closes the files. It is safe to call more than once.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return errors.Join(w.samples.Close(), w.cpu.Close())
}

// WriteFileAtomic replaces path with data: temp file, fsync, rename, fsync
// of the directory. Readers (and a crash) see the old or the new file,
// never half of one; the report writes its derived files the same way.
func WriteFileAtomic(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", base, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", base, err)
	}
	return syncDir(dir)
}

// removeTempLeftovers removes from a run directory the temporary files
// of WriteFileAtomic that a kill left before their rename: "." + the
// file's name + ".tmp" + os.CreateTemp's digits (".env.json.tmp123"),
// nothing else. The caller holds the directory (a resume holds its
// lock), so no write of another process is under way.
func removeTempLeftovers(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !atomicTemp(e.Name()) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("resume: remove a temporary file left by an interrupted write: %w", err)
		}
	}
	return nil
}

// atomicTemp reports whether name is one of WriteFileAtomic's temporary
// files.
func atomicTemp(name string) bool {
	i := strings.LastIndex(name, ".tmp")
	if !strings.HasPrefix(name, ".") || i < 2 {
		return false
	}
	digits := name[i+len(".tmp"):]
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
