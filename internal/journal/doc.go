// Package journal records every change a run makes to host state before it
// makes it, so the change can be undone after the run dies in any way,
// including kill -9 (`cnibench cleanup` replays the journal).
//
// Design notes:
//
//   - One file per run, /run/cnibench/<runID>.journal, JSON lines, append
//     only, fsync'ed after every line. /run is a tmpfs: the journal lives
//     exactly as long as what it guards (namespaces and sysfs values vanish
//     at reboot too), so a journal never outlives its state.
//   - Write-ahead: a Set (old and new value) or an Object (something about
//     to be created) is on disk before the change happens. A crash between
//     the record and the change leaves a record whose undo is a no-op
//     (the value is still the old one; the object does not exist).
//   - The first line is a header naming the owner (pid and the pid's start
//     time from /proc/PID/stat, so a recycled pid is not taken for a live
//     run). The header is written to a temporary file and linked into
//     place, so a journal file always has a complete header.
//   - The owner also holds an flock on the file. The kernel drops it when
//     the owner dies, so it confirms the pid test and, held by a cleanup,
//     keeps two cleanups from replaying the same journal at once.
//   - A crash mid-write can truncate only the last line; readers ignore it.
//     A record there described a change not yet made (records come
//     before the change); an undo mark, a change already undone (marks
//     come after it), whose entry then reads as pending and whose undo
//     finds it done. A bad line before the last is damage, not a crash
//     (damaged.go).
package journal
