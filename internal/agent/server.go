package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cnibench/cnibench/internal/advise/inspect"
	"io"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/metrics/nftrace"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/version"
)

// defaultRun is the run of a server started without one (the installed
// daemon, `agent replay`).
const defaultRun = "agent"

// DefaultJournalDir is where agent sessions keep their journals on the
// node (a hostPath volume, so a restarted agent pod finds them).
const DefaultJournalDir = "/run/cnibench/agent"

// Config configures a Server; zero fields get defaults that reach the
// real node.
type Config struct {
	// Run is the controller's run ID, part of the journal's name.
	Run string
	// Node names the node in the session's errors (default: NodeEnv,
	// which the DaemonSet sets from spec.nodeName, else the hostname).
	Node string
	// FS reaches knobs by namespace name (default tune.LocalFS).
	FS tune.FS
	// Pods resolves "pod:NS/NAME" to a namespace name FS understands
	// (default: a ProcPods on ProcRoot).
	Pods PodResolver
	// JournalDir holds the node journal (default DefaultJournalDir).
	JournalDir string
	// ProcRoot is the host's /proc (default /proc; hostPID makes the
	// agent's /proc the node's).
	ProcRoot string
	// CNIConfDir is the node's CNI config dir as mounted in the agent.
	CNIConfDir string
	// AddrDev finds the device holding an IP (default: net.Interfaces).
	AddrDev func(ip string) (string, error)
	// LowerDev finds the device a tunnel sends through, "" for none
	// (default: netlink, lowerDev).
	LowerDev func(tunnel string) (string, error)
	// StackedOn finds the devices at the bottom of a device's stack
	// (default inspect.StackedOn on /): where RPS is decided for it.
	StackedOn func(dev string) []string
	// Iptables counts rule sets, and says which iptables-save read them
	// (default: both backends', iptablesCounts).
	Iptables func() (map[string]int, string, error)
	// SampleInterval is the CPU sampling interval (default 1s).
	SampleInterval time.Duration
	// IfStats reads a device's counters in a namespace the FS knows
	// (default ifstats.Read: netlink).
	IfStats func(netns.Iface) (ifstats.Counters, error)
	// CPP makes the CPU-cost-per-packet recorder of a window, counting
	// the samples of procs too (default: a cpp.Recorder running perf on
	// this node).
	CPP func(ifs []netns.Iface, procs []string) (CPPRecorder, error)
	// Features says which of the kernel features (probe names) the node
	// lacks, and why (default: probe.Has on this node).
	Features func(names []string) (map[string]string, error)
	// NodeNetns is the path of the node's network namespace file, whose
	// processes OpDaemons lists (default /proc/self/ns/net: the agent
	// runs in the node's network).
	NodeNetns string
	// writable vets a write's path and value (default checkWritable,
	// the allowlist); only tests in this package change it.
	writable func(fsKind, p, v string) error
}

// CPPRecorder brackets a window of CPU cost per packet (cpp.Recorder):
// Start and Stop bracket it, Report then computes the result (perf
// report), and Close drops a window abandoned before its report.
type CPPRecorder interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	Report(ctx context.Context) (cpp.Result, error)
	Close()
}

// nodeEvent is the perf event this node samples, chosen once per agent
// process: hardware cycles where the node can count and sample them,
// else cpu-clock (the node's PMU, not the controller's, decides).
var nodeEvent = sync.OnceValue(func() cpp.Event { return cpp.ChooseEvent(context.Background(), cpp.RunPerf) })

func newCPPRecorder(ifs []netns.Iface, procs []string) (CPPRecorder, error) {
	m, err := cpp.DefaultMap()
	if err != nil {
		return nil, err
	}
	return &cpp.Recorder{Map: m, Event: nodeEvent(), Ifaces: ifs, Commands: procs}, nil
}

// PodResolver maps a pod's "NAMESPACE/NAME" to a namespace reference for
// FS: a name under netns.Dir or a path such as /proc/PID/ns/net.
type PodResolver interface {
	Netns(pod string) (string, error)
}

// Server is one agent session.
type Server struct {
	cfg Config
	fs  *nodeFS
	// mu serialises requests with the session's end, which a signal
	// may bring from another goroutine than Serve's (End); ended
	// refuses what comes after it.
	mu         sync.Mutex
	ended      bool
	jmu        sync.Mutex
	j          *journal.Journal
	lock       *journal.Lock           // the node's, held from the claim or first change to the end (nodelock.go)
	pending    map[string]pendingSet   // knob key -> first old value
	qdiscs     map[string]pendingQdisc // device key -> its qdisc before the netem
	sampler    *metrics.Sampler
	cpp        CPPRecorder // perf window running, or stopped and not yet reported (cppStopped)
	cppStopped bool
	trace      *nftrace.Trace // running netfilter trace, if any
	// scratch finds the scratch namespaces of dead sessions' probes
	// (scratch.go); nil on a node the FS only models.
	scratch *scratchNetns
}

type pendingSet struct {
	seq int
	set journal.Set // Old is the value before the session's first write, New its last write
}

// NewServer returns a session with cfg's defaults filled in.
func NewServer(cfg Config) *Server {
	if cfg.FS == nil {
		cfg.FS = tune.LocalFS{}
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.Pods == nil {
		cfg.Pods = &ProcPods{ProcRoot: cfg.ProcRoot}
	}
	if cfg.JournalDir == "" {
		cfg.JournalDir = DefaultJournalDir
	}
	if cfg.Run == "" {
		cfg.Run = defaultRun
	}
	if cfg.Node == "" {
		cfg.Node = os.Getenv(NodeEnv)
	}
	if cfg.Node == "" {
		// A host-network pod's hostname is its node's.
		cfg.Node, _ = os.Hostname()
	}
	if cfg.AddrDev == nil {
		cfg.AddrDev = addrDev
	}
	if cfg.LowerDev == nil {
		cfg.LowerDev = lowerDev
	}
	if cfg.StackedOn == nil {
		cfg.StackedOn = func(dev string) []string { return inspect.StackedOn("/", dev) }
	}
	if cfg.Iptables == nil {
		cfg.Iptables = iptablesCounts
	}
	if cfg.IfStats == nil {
		cfg.IfStats = ifstats.Read
	}
	if cfg.CPP == nil {
		cfg.CPP = newCPPRecorder
	}
	if cfg.Features == nil {
		cfg.Features = missingFeatures
	}
	if cfg.NodeNetns == "" {
		cfg.NodeNetns = "/proc/self/ns/net"
	}
	if cfg.writable == nil {
		cfg.writable = checkWritable
	}
	fs := &nodeFS{base: cfg.FS, pods: cfg.Pods}
	var scratch *scratchNetns
	if _, local := cfg.FS.(tune.LocalFS); local {
		fs.host = &hostProc{procRoot: cfg.ProcRoot}
		scratch = &nodeScratch
	}
	return &Server{cfg: cfg, fs: fs, pending: map[string]pendingSet{}, qdiscs: map[string]pendingQdisc{}, scratch: scratch}
}

// Serve answers requests from r on w until r ends, then reverts what the
// session still has changed. It returns the revert's error, if any.
func (s *Server) Serve(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriter(w)
	var serr error
	for {
		line, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var req Request
			var resp Response
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				resp = Response{Error: "bad request: " + jerr.Error(), Node: s.cfg.Node}
			} else {
				resp = s.Handle(req)
			}
			b, _ := json.Marshal(resp)
			bw.Write(append(b, '\n'))
			if ferr := bw.Flush(); ferr != nil {
				serr = ferr
				break
			}
		}
		if err != nil {
			break
		}
	}
	if err := errors.Join(serr, s.End()); err != nil {
		return fmt.Errorf("agent on node %s: session end: %w", s.cfg.Node, err)
	}
	return nil
}

// End ends the session as the end of Serve's input does, once: the
// agent pod's stop or `cleanup --kube` (SIGTERM, SIGHUP) ends it so, from
// another goroutine than Serve's. A request being answered finishes
// first; later ones are refused, so nothing is changed or started on the
// node after it was put back.
func (s *Server) End() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil
	}
	s.ended = true
	return s.end()
}

// end stops what the session still runs (CPU sampling, perf, the trace,
// which Revert stops), reverts what it still has changed, retires its
// journal and lets go of the node (s.mu held).
func (s *Server) end() error {
	if s.sampler != nil {
		s.sampler.Stop()
		s.sampler = nil
	}
	if s.cpp != nil {
		// The controller went away mid-window: end perf, drop its data.
		s.cpp.Close()
		s.cpp, s.cppStopped = nil, false
	}
	_, rerr := s.Revert()
	cerr := s.closeJournal()
	// A clean session leaves nothing on the node: its journal was retired
	// above, and the directory goes too unless another session's journal
	// (or this one's, still pending) is in it. The node's lock goes last,
	// so no session changes the node before this one has put it back.
	removeEmptyDir(s.cfg.JournalDir)
	s.releaseNode(cerr != nil)
	return errors.Join(rerr, cerr)
}

// Handle answers one request.
func (s *Server) Handle(req Request) Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := Response{ID: req.ID}
	var err error
	switch {
	case s.ended:
		err = errors.New("session ended: its changes were put back")
	case req.Run != s.cfg.Run:
		// A session is one run's: a request naming another run (or none)
		// is refused before anything is read or changed.
		err = fmt.Errorf("request for run %q refused: this session serves run %q", req.Run, s.cfg.Run)
	default:
		err = s.answer(req, &resp)
	}
	if err != nil {
		resp.Error = err.Error()
		resp.Kind = errorKind(err)
		resp.Node = s.cfg.Node
	}
	return resp
}

// answer does what req asks and fills resp.
func (s *Server) answer(req Request, resp *Response) error {
	var err error
	switch req.Op {
	case OpPing:
		resp.Value = "pong"
	case OpHello:
		resp.Value = version.Version
	case OpClaim:
		err = s.claim()
	case OpRead:
		resp.Value, err = s.fs.Read(req.Netns, req.FS, req.Path)
	case OpWrite:
		err = s.writeChecked(req.Netns, req.FS, req.Path, req.Value)
	case OpList:
		resp.List, err = s.fs.List(req.Netns, req.FS, req.Path)
	case OpHostVeth:
		resp.Value, err = s.hostVeth(req.Netns, req.Iface)
	case OpAddrDev:
		if resp.Value, err = s.cfg.AddrDev(req.Value); err == nil {
			resp.List = s.cfg.StackedOn(resp.Value)
		}
	case OpLowerDev:
		if resp.Value, err = s.cfg.LowerDev(req.Value); err == nil && resp.Value != "" {
			resp.List = s.cfg.StackedOn(resp.Value)
		}
	case OpLinks:
		resp.List, err = s.fs.List(req.Netns, tune.FSSysfs, "class/net")
	case OpSampleStart:
		if s.sampler == nil {
			s.sampler = metrics.NewSampler(s.cfg.ProcRoot, s.cfg.SampleInterval).WithIdle(tune.HostSysfs(s.fs))
		}
		err = s.sampler.Start()
	case OpSampleStop:
		resp.Window, err = s.sampleStop()
	case OpCNIConf:
		resp.Files, err = readConfDir(s.cfg.CNIConfDir)
	case OpIptables:
		resp.Counts, resp.Value, err = s.cfg.Iptables()
	case OpRevert:
		resp.Reverted, err = s.Revert()
	case OpReplay:
		var sum ReplaySummary
		sum, err = s.replay()
		resp.Reverted, resp.Value = sum.Restored, sum.String()
	case OpInfo:
		resp.Info, err = s.nodeInfo()
	case OpInspect:
		resp.Value, err = s.inspect()
	case OpIfStats:
		resp.IfStats, err = s.ifStats(req.Ifaces)
	case OpMemory:
		resp.Number, err = metrics.MemoryPercent(path.Join(s.cfg.ProcRoot, "meminfo"))
	case OpDaemons:
		resp.Procs, err = s.daemons(req.Args)
	case OpCPPStart:
		err = s.cppStart(req.Ifaces, req.Args)
	case OpCPPStop:
		err = s.cppStop()
	case OpCPPReport:
		resp.CPP, err = s.cppReport()
	case OpTraceStart, OpTraceStop:
		err = s.handleTrace(req, resp)
	case OpImpair, OpUnimpair, OpQdiscStats, OpFeatures:
		err = s.handleImpair(req, resp)
	case OpMissing:
		// The agent runs the workload pods' image, so what it lacks they
		// lack: the controller checks before creating any of them.
		for _, prog := range req.Args {
			if _, lerr := exec.LookPath(prog); lerr != nil {
				resp.List = append(resp.List, prog)
			}
		}
	default:
		err = fmt.Errorf("unknown op %q", req.Op)
	}
	return err
}

// sampleStop ends the CPU sampling window OpSampleStart began.
func (s *Server) sampleStop() (*metrics.Window, error) {
	if s.sampler == nil {
		return nil, errors.New("sampler not started")
	}
	w, err := s.sampler.Stop()
	return &w, err
}

// cppStop ends the perf window OpCPPStart began; its report waits for
// OpCPPReport.
func (s *Server) cppStop() error {
	if s.cpp == nil || s.cppStopped {
		return errors.New("cpu cost per packet: not started")
	}
	if err := s.cpp.Stop(context.Background()); err != nil {
		s.cpp = nil // a failed Stop dropped the recording
		return err
	}
	s.cppStopped = true
	return nil
}

// cppReport computes the CPU cost per packet of the window OpCPPStop
// ended, and drops it.
func (s *Server) cppReport() (*cpp.Result, error) {
	if s.cpp == nil || !s.cppStopped {
		return nil, errors.New("cpu cost per packet: no stopped window to report")
	}
	res, err := s.cpp.Report(context.Background())
	s.cpp, s.cppStopped = nil, false
	return &res, err
}
