package cpuset

import "golang.org/x/sys/unix"

// Affinity is the set of CPUs this process may run on (sched_getaffinity):
// its cgroup's cpuset within the online CPUs. The programs it starts
// inherit it, and taskset cannot pin them outside it.
func Affinity() (Set, error) {
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(0, &m); err != nil {
		return nil, err
	}
	var s Set
	for cpu := 0; cpu <= MaxCPU && len(s) < m.Count(); cpu++ {
		if m.IsSet(cpu) {
			s = append(s, cpu)
		}
	}
	return s, nil
}

// Outside lists the CPUs of s that are not in allowed.
func (s Set) Outside(allowed Set) Set {
	var out Set
	for _, c := range s {
		if !allowed.Contains(c) {
			out = append(out, c)
		}
	}
	return out
}
