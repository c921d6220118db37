package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// MarkDone appends the undo marks of entries seqs to the journal of a
// dead run whose lock this Replay holds (Stale, Dead without peek), for
// one kept for the next cleanup: without them the next one judges each
// entry again, and a restored value someone has since set to what the
// run once wrote would be overwritten as the run's. A journal whose last
// line was cut, or with damaged lines, gets none: appended after a cut
// line a mark would make it a damaged line, and a damaged journal is set
// aside, not kept. Unknown or done entries are skipped.
func (r *Replay) MarkDone(seqs []int) error {
	if r.lock == nil {
		return fmt.Errorf("mark entries of journal %s done: its lock is not held", r.Path)
	}
	if r.Truncated || len(r.Damaged) > 0 || len(seqs) == 0 {
		return nil
	}
	var out []byte
	var marked []int
	for _, seq := range seqs {
		for i, e := range r.Entries {
			if e.Seq != seq || e.Done {
				continue
			}
			rec := record{Reverted: seq}
			if e.Object != nil {
				rec = record{Removed: seq}
			}
			line, err := json.Marshal(rec)
			if err != nil {
				return fmt.Errorf("journal %s: %w", r.Path, err)
			}
			out = append(append(out, line...), '\n')
			marked = append(marked, i)
		}
	}
	if len(out) == 0 {
		return nil
	}
	if err := appendSync(r.Path, out); err != nil {
		return fmt.Errorf("mark entries of journal %s done: %w", r.Path, err)
	}
	for _, i := range marked {
		r.Entries[i].Done = true
	}
	return nil
}

// appendSync appends b to the file at path and syncs it.
func appendSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}
