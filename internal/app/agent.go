package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/workload/ab"
)

// agentFlags configure the node agent's subcommands.
type agentFlags struct {
	run        string
	cniConfDir string
	journalDir string
}

func (f *agentFlags) config() agent.Config {
	dir := f.journalDir
	if n := os.Getenv(agent.NodeEnv); n != "" && dir == agent.DefaultJournalDir {
		dir = filepath.Join(dir, n)
	}
	return agent.Config{Run: f.run, CNIConfDir: f.cniConfDir, JournalDir: dir}
}

func newAgentCmd() *cobra.Command {
	f := &agentFlags{}
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "The node agent of the kube engine (runs inside the cluster)",
		Long: `The kube engine deploys cnibench itself as a privileged, host-network DaemonSet on the
server and client nodes and reaches it only by exec through the Kubernetes API. These
subcommands are what it runs there; users do not call them directly.`,
		Example: "  cnibench agent daemon --run 3f9a2c   # the agent pod's main process\n" +
			"  cnibench agent serve --run 3f9a2c    # one controller session (JSON lines on stdin/stdout)",
		Hidden: true,
	}
	cmd.PersistentFlags().StringVar(&f.run, "run", "agent", "run ID the journal is named after")
	cmd.PersistentFlags().StringVar(&f.cniConfDir, "cni-conf-dir", "/host/cni/net.d", "the node's CNI config directory as mounted in the agent")
	cmd.PersistentFlags().StringVar(&f.journalDir, "journal-dir", agent.DefaultJournalDir, "node-local journal directory")
	cmd.AddCommand(newAgentDaemonCmd(f), newAgentServeCmd(f), newAgentExecCmd(), newAgentPauseCmd(),
		newAgentReplayCmd(f), newAgentNginxCmd())
	return cmd
}

func newAgentDaemonCmd(f *agentFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "daemon",
		Short: "Revert journals of dead sessions now, periodically, and on SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			return agent.Daemon(ctx, f.config(), 5*time.Second, func(format string, a ...any) { log.Info(fmt.Sprintf(format, a...)) })
		},
	}
}

func newAgentServeCmd(f *agentFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Answer one controller session on stdin/stdout; revert its changes when it ends",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
			defer signal.Stop(sig)
			return serveSession(agent.NewServer(f.config()), cmd.InOrStdin(), cmd.OutOrStdout(), sig)
		},
	}
}

// serveSession answers one controller session until its input ends or
// a signal comes (the agent pod's stop, `cleanup --kube` ending a dead
// run's session); either way the session ends as a whole first: what it
// runs on the node stops (perf record -a, the CPU sampler, the trace)
// and what it changed is put back. A revert alone left perf sampling
// every CPU of the node after the session was gone.
func serveSession(srv *agent.Server, in io.Reader, out io.Writer, sig <-chan os.Signal) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(in, out) }()
	select {
	case err := <-done:
		return err
	case s := <-sig:
		if err := srv.End(); err != nil {
			return fmt.Errorf("session end on %v: %w", s, err)
		}
		return fmt.Errorf("stopped by %v (session ended: changes reverted)", s)
	}
}

func newAgentExecCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "exec -- PROGRAM [ARG...]",
		Short: "Run a program; stop it when stdin ends",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			code := agent.Exec(args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), 2*time.Second)
			if code != 0 {
				os.Exit(code) // the exit status is the program's, for the exec API
			}
			return nil
		},
	}
}

func newAgentPauseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "pause",
		Short: "Wait for SIGTERM, reaping children (workload pods' main process)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			agent.Pause(cmd.Context())
			return nil
		},
	}
}

func newAgentReplayCmd(f *agentFlags) *cobra.Command {
	var endRuns []string
	cmd := &cobra.Command{
		Use:   "replay [--end-run RUN]...",
		Short: "Revert the journals of dead sessions on this node",
		Long: `Reverts the journals of dead sessions on this node. With --end-run, first ends the live
sessions of those runs here (SIGTERM: each puts back what it changed and lets go of the
node), as cleanup --kube does for the runs it found dead: a session whose runner vanished
can outlive it for hours, holding the node.`,
		Example: "  cnibench agent replay --end-run 3f9a2c",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv := agent.NewServer(f.config())
			ended, err := agent.EndRuns(f.config().JournalDir, endRuns)
			if errors.Is(err, journal.ErrBadRunID) {
				return err // nothing done: a bad name ends nothing
			}
			for _, l := range ended {
				fmt.Fprintln(cmd.OutOrStdout(), l)
			}
			r := srv.Handle(agent.Request{Op: agent.OpReplay, Run: f.run})
			// What it did with each value, not a count that said "reverted"
			// of values already back or left alone.
			fmt.Fprintln(cmd.OutOrStdout(), r.Value)
			if r.Error != "" {
				err = errors.Join(err, fmt.Errorf("replay: %s", r.Error))
			}
			return err
		},
	}
	cmd.Flags().StringArrayVar(&endRuns, "end-run", nil, "end this dead run's live sessions on this node first (repeatable)")
	return cmd
}

func newAgentNginxCmd() *cobra.Command {
	var listen, nginxBin string
	var size int64
	nginx := &cobra.Command{
		Use:   "nginx --listen IP:PORT --size BYTES",
		Short: "Serve a body of BYTES with nginx on IP:PORT until SIGTERM (the HTTP workload's server in a kube pod)",
		Long: `Writes nginx's private site (config, body, temp paths) in a temporary directory of this
pod, runs nginx in the foreground, and on SIGTERM stops it and removes the site. The kube
engine's server pods have their own filesystem, so the HTTP workload runs this there
instead of writing the site on the controller's machine.`,
		Example: "  cnibench agent nginx --listen 10.244.1.5:5201 --size 5242880",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listen == "" || size <= 0 {
				return errors.New("--listen and a positive --size are required")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return ab.Serve(ctx, nginxBin, listen, size, cmd.ErrOrStderr())
		},
	}
	nginx.Flags().StringVar(&listen, "listen", "", "address nginx listens on (IP:PORT)")
	nginx.Flags().Int64Var(&size, "size", 0, "size of the served body in bytes")
	nginx.Flags().StringVar(&nginxBin, "nginx", "nginx", "the nginx program")
	return nginx
}
