// Command cnibench measures and tunes pod networking. All logic lives in
// internal/app; main only wires the process to it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/cnibench/cnibench/internal/app"
)

func main() {
	// Ctrl-C and SIGTERM cancel the context; the run then tears down and
	// reverts everything before exiting.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
