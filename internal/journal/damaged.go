package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A damaged journal: a line other than the last that cannot be read.
// A crash cuts only the last line (appends are whole lines, fsync'ed), so
// a bad line before it is corruption (a failing disk, an edit by hand),
// and what it recorded is unknown. ReadReplay refuses such a journal;
// cleanup reads it with ReadSalvage, undoes what it can read (each value
// only where it still holds what the run wrote, so a line it could not
// read never makes it write a wrong value), sets the file aside as
// PATH.corrupt (SetAside: no longer a journal, so runs are no longer
// refused for it), and shows the unreadable lines for the operator to
// check by hand.

// CorruptExt is appended to a damaged journal's name once cleanup has
// undone what it could read of it.
const CorruptExt = ".corrupt"

// LineError is a journal line that cannot be read.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// Damage is one unreadable line of a damaged journal.
type Damage struct {
	Line int
	// Text is the line as it is in the file.
	Text string
	Err  error
}

// Quoted is the line for a message: quoted, and cut at 200 bytes.
func (d Damage) Quoted() string {
	t := d.Text
	if len(t) > 200 {
		t = t[:200] + "..."
	}
	return fmt.Sprintf("%q", t)
}

// DamagedLines lists a damaged journal's unreadable lines for a message:
// `line 7 "..."`, comma-separated.
func (r *Replay) DamagedLines() string {
	lines := make([]string, len(r.Damaged))
	for i, d := range r.Damaged {
		lines[i] = fmt.Sprintf("line %d %s", d.Line, d.Quoted())
	}
	return strings.Join(lines, ", ")
}

// ReadSalvage reads a journal as ReadReplay does, except that lines other
// than a cut last line that cannot be read are listed in Damaged and the
// rest is read on. A journal whose header cannot be read or does not
// describe its file still fails: nothing in it can be trusted.
func ReadSalvage(path string) (*Replay, error) { return read(path, true) }

// SetAside renames a damaged journal to PATH.corrupt, after cleanup has
// undone what it could read of it, and drops the lock. The file stays
// for the operator; it is no journal any more (runs are not refused for
// it, cleanup does not read it again). An existing PATH.corrupt is not
// replaced.
func (r *Replay) SetAside() (string, error) {
	to := r.Path + CorruptExt
	err := os.Link(r.Path, to)
	if err == nil {
		err = os.Remove(r.Path)
		syncDir(filepath.Dir(r.Path))
	}
	r.Release()
	if err != nil {
		return "", fmt.Errorf("set damaged journal %s aside as %s: %w", r.Path, to, err)
	}
	return to, nil
}

// String says what an entry recorded, for messages.
func (e Entry) String() string {
	where := func(ns string) string {
		if ns == "" {
			return "host"
		}
		return ns
	}
	switch {
	case e.Set != nil:
		return fmt.Sprintf("%s:%s %q->%q", where(e.Set.Netns), e.Set.Path, e.Set.Old, e.Set.New)
	case e.Object != nil && e.Object.Kind == KindProcess:
		return fmt.Sprintf("process %d (%s)", e.Object.PID, e.Object.Name)
	case e.Object != nil && e.Object.Netns != "":
		return fmt.Sprintf("%s %s in %s", e.Object.Kind, e.Object.Name, e.Object.Netns)
	case e.Object != nil:
		return e.Object.Kind + " " + e.Object.Name
	case e.Qdisc != nil:
		return fmt.Sprintf("qdisc of %s in %s", e.Qdisc.Dev, where(e.Qdisc.Netns))
	}
	return fmt.Sprintf("entry %d", e.Seq)
}

// damagedNote says, for BeginRun's refusal, what is wrong with a dead
// run's damaged journal and what cleanup will do with it.
func damagedNote(r *Replay) string {
	var lines []string
	for _, d := range r.Damaged {
		lines = append(lines, fmt.Sprintf("line %d (%v)", d.Line, d.Err))
	}
	pend := r.Pending()
	var what []string
	for i, e := range pend {
		if i == 5 {
			what = append(what, fmt.Sprintf("and %d more", len(pend)-i))
			break
		}
		what = append(what, e.String())
	}
	readable := "no change it can read is pending"
	if len(pend) > 0 {
		readable = fmt.Sprintf("%d change(s) it can read are pending: %s", len(pend), strings.Join(what, ", "))
	}
	return fmt.Sprintf("journal %s of dead run %s is damaged: %s cannot be read, so it cannot be replayed in full; %s. "+
		"`cnibench cleanup` undoes those, sets the file aside as %s and shows the unreadable line(s) for you to check by hand "+
		"(`cnibench cleanup --dry-run` shows the same without changing anything)",
		r.Path, r.Header.RunID, strings.Join(lines, ", "), readable, r.Path+CorruptExt)
}

// untrustedNote says what to do with a file in the journal directory that
// cannot be read as a journal at all.
func untrustedNote(dir, path string, err error) string {
	if inner := errors.Unwrap(err); inner != nil && strings.HasPrefix(err.Error(), "read journal") {
		err = inner // the path is said already
	}
	var le *LineError
	if errors.As(err, &le) || errors.Is(err, ErrNoHeader) || errors.Is(err, ErrBadHeader) {
		return fmt.Sprintf("%s cannot be trusted as a journal (%v), so cleanup leaves it alone: look at it, undo by hand what it records that is still on the host, and move it out of %s",
			path, err, dir)
	}
	return fmt.Sprintf("%s cannot be read (%v)", path, err)
}
