package cpuidle

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
)

// PollName is the name of the polling idle state (drivers/cpuidle/
// poll_state.c, cpuidle_poll_state_init): the CPU spins in poll_idle
// until there is work or its time is up. Drivers that have it (acpi_idle,
// intel_idle, haltpoll) make it state0.
const PollName = "POLL"

// PollTimes returns each CPU's total time in the polling state, in
// microseconds (stateN/time, which the kernel adds to on every exit from
// the state), by CPU number. A CPU without a polling state is absent: an
// offline CPU, or a kernel without a cpuidle driver (idle=poll polls in
// the idle loop itself, where no counter records it). /proc/stat counts
// the polling time as idle, though the core spins all of it.
func PollTimes(r Reader) (map[int]uint64, error) {
	names, err := r.List(Dir)
	if err != nil {
		return nil, fmt.Errorf("list CPUs: %w", err)
	}
	out := map[int]uint64{}
	for _, n := range names {
		num, ok := strings.CutPrefix(n, "cpu")
		cpu, err := strconv.Atoi(num)
		if !ok || err != nil || cpu < 0 || strconv.Itoa(cpu) != num {
			continue
		}
		sd := path.Join(Dir, n, "cpuidle", "state0")
		name, err := read(r, path.Join(sd, "name"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("CPU %d: %w", cpu, err)
		}
		if name != PollName {
			continue
		}
		v, err := read(r, path.Join(sd, "time"))
		if err != nil {
			return nil, fmt.Errorf("CPU %d: %w", cpu, err)
		}
		us, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("CPU %d: %s: %q is not a count of microseconds", cpu, path.Join(sd, "time"), v)
		}
		out[cpu] = us
	}
	return out, nil
}
