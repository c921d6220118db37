// Command cnibench measures and tunes pod networking. All logic lives in
// internal/app; main only wires the process to it.
package main

import (
	"context"
	"os"

	"github.com/cnibench/cnibench/internal/app"
)

func main() {
	// Programs it starts (ab, nginx) need more open files than the
	// soft limit Go would give them back.
	_ = raiseFileLimit()
	// SIGINT, SIGTERM and SIGHUP cancel the context; the run then tears
	// down and reverts everything before exiting. A second signal says
	// what is left, a third exits at once (app.HandleSignals).
	ctx, stop := app.HandleSignals(context.Background(), os.Stderr, os.Exit)
	code := app.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
