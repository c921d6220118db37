package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Run is a run directory's raw files as read by Load.
type Run struct {
	Dir string
	// Study is study.yaml as written (the resolved study); callers decode
	// it with the study package, which results must not import.
	Study []byte
	Env   Env
	// HasEnv is false when env.json is missing.
	HasEnv bool
	// Samples are the counted trials; Marked the attempts analysis leaves
	// out (failed, or disturbed and repeated), shown in the report.
	Samples []Sample
	Marked  []Sample
	CPU     []CPUPoint
	// Stops is stops.json: the adaptive controller's word per cell; nil
	// for a run with a fixed number of trials.
	Stops []Stop
	// Warnings lists what Load tolerated: missing optional files and a
	// truncated last line (a crash during the final write).
	Warnings []string
}

// LineError is a corrupt line in a JSON Lines file.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Load reads a run directory. study.yaml is required; a missing env.json,
// samples.jsonl or cpu.jsonl is a warning (a run that crashed early still
// gets a report). In the JSONL files an unparsable last line without its
// newline is what a crash mid-append leaves: it is dropped with a warning.
// Any other unparsable line is an error naming file and line.
func Load(dir string) (*Run, error) {
	r := &Run{Dir: dir}
	var err error
	if r.Study, err = os.ReadFile(filepath.Join(dir, StudyFile)); err != nil {
		return nil, fmt.Errorf("load run: %w", err)
	}
	envPath := filepath.Join(dir, EnvFile)
	switch b, err := os.ReadFile(envPath); {
	case errors.Is(err, os.ErrNotExist):
		r.warn("%s is missing: no environment metadata", envPath)
	case err != nil:
		return nil, fmt.Errorf("load run: %w", err)
	default:
		if err := json.Unmarshal(b, &r.Env); err != nil {
			return nil, fmt.Errorf("%s: %w", envPath, err)
		}
		r.HasEnv = true
		upgradeEnv(&r.Env)
	}
	all, err := readJSONL[Sample](r, filepath.Join(dir, SamplesFile))
	if err != nil {
		return nil, err
	}
	for _, s := range all {
		if s.Counted() {
			r.Samples = append(r.Samples, s)
		} else {
			r.Marked = append(r.Marked, s)
		}
	}
	switch b, err := os.ReadFile(filepath.Join(dir, StopsFile)); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("load run: %w", err)
	default:
		if err := json.Unmarshal(b, &r.Stops); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, StopsFile), err)
		}
	}
	if r.CPU, err = readJSONL[CPUPoint](r, filepath.Join(dir, CPUFile)); err != nil {
		return nil, err
	}
	if w := r.stopsDisagree(); w != "" {
		r.warn("%s", w)
	}
	return r, nil
}

// stopsDisagree says when stops.json counts other trials for a cell than
// samples.jsonl holds: the runner writes a cell's stop once its block has
// ended, with every trial stored, so a difference is an edit of
// samples.jsonl since (a trial removed by hand). The decisions and the
// repetitions table are then the run's as it ended, while the other
// tables are computed from the samples as they are now; the reader is
// told, not left to find that two tables of one page disagree.
func (r *Run) stopsDisagree() string {
	counted := map[Cell]int{}
	for _, s := range r.Samples {
		counted[s.Cell]++
	}
	var cells []string
	for _, st := range r.Stops {
		n := counted[st.Cell]
		// A given-up cell's last round counts in N without a counted
		// trial (its attempts failed).
		if n == st.N || (st.Failed != "" && n == st.N-1) {
			continue
		}
		id := fmt.Sprintf("%s/%s/%s/r=%d", st.Cell.Datapath, st.Cell.Tuning, st.Cell.Workload, st.Cell.Replicas)
		if st.Cell.Impairment != "" {
			id += "/" + st.Cell.Impairment
		}
		cells = append(cells, fmt.Sprintf("%s stopped after %d, samples.jsonl holds %d", id, st.N, n))
	}
	total, what := len(cells), "cells"
	switch {
	case total == 0:
		return ""
	case total == 1:
		what = "cell"
	case total > 3:
		cells = append(cells[:3], fmt.Sprintf("and %d more", total-3))
	}
	return fmt.Sprintf("stops.json and samples.jsonl count different trials for %d %s (%s): samples.jsonl was changed after the run wrote stops.json; "+
		"the decisions and the repetitions table are the run's as it ended, the other tables are computed from samples.jsonl as it is now",
		total, what, strings.Join(cells, "; "))
}

func (r *Run) warn(format string, a ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, a...))
}

// readJSONL decodes one T per line. Blank lines are skipped.
func readJSONL[T any](r *Run, path string) ([]T, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		r.warn("%s is missing", path)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load run: %w", err)
	}
	defer f.Close()
	// bufio.Reader rather than Scanner: a sample with many replicas can
	// exceed Scanner's token limit.
	br := bufio.NewReader(f)
	var out []T
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		complete := err == nil // ends with '\n'
		if len(bytes.TrimSpace(line)) > 0 {
			v, perr := decodeLine[T](line)
			if c, ok := any(&v).(checker); ok && perr == nil {
				// A line that parsed but is no record of a cell would
				// be counted into no table, silently.
				perr = c.check()
			}
			switch {
			case perr == nil:
				out = append(out, v)
			case !complete:
				r.warn("%s:%d: dropped a truncated last line (the run was interrupted while writing it): %v", path, n, perr)
			default:
				return nil, &LineError{File: path, Line: n, Err: perr}
			}
		}
		if !complete {
			return out, nil
		}
	}
}

// checker is a record that can say it is not one of a run's: JSON that
// parsed, but without what puts it in a table.
type checker interface{ check() error }

func (s *Sample) check() error {
	if err := s.Cell.check(); err != nil {
		return err
	}
	if s.Trial < 0 {
		return fmt.Errorf("trial: %d is negative", s.Trial)
	}
	return nil
}

func (p *CPUPoint) check() error { return p.Cell.check() }

// check names the identity fields a record's cell lacks. A cell of a real
// run always has all of them (the study's expansion fills each).
func (c Cell) check() error {
	var missing []string
	for _, f := range []struct{ name, v string }{{"cell.datapath", c.Datapath}, {"cell.tuning", c.Tuning}, {"cell.workload", c.Workload}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s missing: not a record of a cell", strings.Join(missing, ", "))
	}
	if c.Replicas < 0 {
		return fmt.Errorf("cell.replicas: %d is negative", c.Replicas)
	}
	return nil
}

func decodeLine[T any](line []byte) (T, error) {
	var v T
	line = bytes.TrimSpace(line)
	if line[0] != '{' {
		return v, errors.New("not a JSON object")
	}
	err := json.Unmarshal(line, &v)
	return v, err
}

// upgradeEnv reads older env.json files: kube runs before the CNI field
// recorded the detected CNI as the tool "cni", as "name (mode)".
func upgradeEnv(e *Env) {
	v, ok := e.Tools["cni"]
	if e.CNI != nil || !ok || v == "" {
		return
	}
	name, mode, _ := strings.Cut(v, " (")
	e.CNI = &CNI{Name: name, Mode: strings.TrimSuffix(mode, ")")}
	delete(e.Tools, "cni")
}
