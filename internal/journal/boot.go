package journal

import (
	"os"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// bootClock is the boot clock (CLOCK_BOOTTIME) in ns, 0 if unknown: it
// only goes forward, through suspend too, where the wall clock may be
// set back (NTP's first step at boot, an operator's date).
func bootClock() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// bootID names this boot ("" if unknown); the boot clock of one boot says
// nothing of another's.
func bootID() string {
	id, _ := BootID()
	return id
}

// BootID is this machine's boot ID (/proc/sys/kernel/random/boot_id):
// this boot's name, and what a kubelet reports as its node's boot ID.
func BootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b)), err
}

// newestFirst orders journals for replay, newest first by when they were
// opened, not by name: undoing a later run's changes first brings each
// value back to what the earlier run found (A set 0->32768, B then
// 32768->16384: B's undo gives 32768, which is what A wrote, so A's undo
// gives 0). When all were opened in one boot and say when on its boot
// clock (Header.Boot), that decides: the wall clock (Started) may have
// been set back between two runs. Otherwise (a journal of an older
// cnibench, or of another boot in a --journal-dir that outlives reboots)
// the wall clock decides for all, so that the order stays one order.
// The process start time (PIDStart) would not do: one process (advise
// --prove) opens a journal per candidate, one after the other.
func newestFirst(rs []*Replay) {
	byBoot := len(rs) > 0 && rs[0].Header.BootID != ""
	for _, r := range rs {
		byBoot = byBoot && r.Header.BootID == rs[0].Header.BootID && r.Header.Boot > 0
	}
	sort.SliceStable(rs, func(a, b int) bool {
		ha, hb := rs[a].Header, rs[b].Header
		if byBoot {
			return ha.Boot > hb.Boot
		}
		return ha.Started.After(hb.Started)
	})
}

// currentBootID is this boot's ID; a variable so tests can fake a
// reboot.
var currentBootID = bootID

// FromEarlierBoot reports whether the journal was opened in an earlier
// boot of this machine (its header's BootID is not this boot's), as one
// kept in a --journal-dir that survives a reboot is. What it recorded on
// the kernel, values, processes, namespaces, links and qdiscs, went with
// the reboot: written back now, an old value would overwrite what this
// boot set. Its files on disk (state and temporary directories) are
// still there. A journal of an older cnibench (no BootID), or a boot ID
// that cannot be read, says nothing: false.
func (r *Replay) FromEarlierBoot() bool {
	if r.Header.BootID == "" {
		return false
	}
	now := currentBootID()
	return now != "" && now != r.Header.BootID
}
