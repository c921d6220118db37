package netns

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// StartTied starts cmd in the namespace of the process, unpinned, so
// that the kernel kills it (SIGKILL, Pdeathsig) when this process dies,
// however it dies. The kernel sends Pdeathsig when the thread that
// forked the child exits, not the process, and Do's and Start's threads
// are thrown away after each use: cmd is forked from one thread kept for
// the process's life instead (tiedWork). That thread is in the process's
// own namespace: a goroutine started here runs on a thread of the
// scheduler's pool, and every thread that entered another namespace is
// locked and ends with its goroutine (onThread), never back in the pool.
func StartTied(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	errc := make(chan error, 1)
	tiedWork() <- func() { errc <- cmd.Start() }
	return <-errc
}

var tiedWork = sync.OnceValue(func() chan<- func() {
	work := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: the thread must not end
		for fn := range work {
			fn()
		}
	}()
	return work
})
