package main

import "syscall"

// raiseFileLimit raises the soft open-file limit to the hard one for
// this process and the programs it starts. Go raises its own soft limit
// at start but gives the programs it execs the original back (syscall's
// origRlimitNofile), often 1024, so ab at concurrency 1100 failed every
// trial ("socket: Too many open files (24)") on a stock host. An explicit
// Setrlimit of RLIMIT_NOFILE tells Go (1.21 on) to leave the limit of
// its children as set. An error changes nothing: the programs then get
// the limit they would have had.
func raiseFileLimit() error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	lim.Cur = lim.Max
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}
