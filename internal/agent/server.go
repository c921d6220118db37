package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/version"
	"golang.org/x/sys/unix"
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
	// Iptables counts rule sets (default: runs iptables-save).
	Iptables func() (map[string]int, error)
	// SampleInterval is the CPU sampling interval (default 1s).
	SampleInterval time.Duration
	// IfStats reads a device's counters in a namespace the FS knows
	// (default ifstats.Read: netlink).
	IfStats func(netns.Iface) (ifstats.Counters, error)
	// CPP makes the CPU-cost-per-packet recorder of a window (default: a
	// cpp.Recorder running perf on this node).
	CPP func(ifs []netns.Iface) (CPPRecorder, error)
	// writable vets a write's path (default checkWritable, the
	// allowlist); only tests in this package change it.
	writable func(fsKind, p string) error
}

// CPPRecorder brackets a window of CPU cost per packet (cpp.Recorder).
type CPPRecorder interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) (cpp.Result, error)
}

// nodeEvent is the perf event this node samples, chosen once per agent
// process: hardware cycles where the node can count and sample them,
// else cpu-clock (the node's PMU, not the controller's, decides).
var nodeEvent = sync.OnceValue(func() cpp.Event { return cpp.ChooseEvent(context.Background(), cpp.RunPerf) })

func newCPPRecorder(ifs []netns.Iface) (CPPRecorder, error) {
	m, err := cpp.DefaultMap()
	if err != nil {
		return nil, err
	}
	return &cpp.Recorder{Map: m, Event: nodeEvent(), Ifaces: ifs}, nil
}

// PodResolver maps a pod's "NAMESPACE/NAME" to a namespace reference for
// FS: a name under netns.Dir or a path such as /proc/PID/ns/net.
type PodResolver interface {
	Netns(pod string) (string, error)
}

// Server is one agent session.
type Server struct {
	cfg     Config
	fs      *nodeFS
	jmu     sync.Mutex
	j       *journal.Journal
	pending map[string]pendingSet // knob key -> first old value
	sampler *metrics.Sampler
	cpp     CPPRecorder // running perf window, if any
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
	if cfg.AddrDev == nil {
		cfg.AddrDev = addrDev
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
	if cfg.writable == nil {
		cfg.writable = checkWritable
	}
	fs := &nodeFS{base: cfg.FS, pods: cfg.Pods}
	if _, local := cfg.FS.(tune.LocalFS); local {
		fs.host = &hostProc{procRoot: cfg.ProcRoot}
	}
	return &Server{cfg: cfg, fs: fs, pending: map[string]pendingSet{}}
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
				resp = Response{Error: "bad request: " + jerr.Error()}
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
	if s.sampler != nil {
		s.sampler.Stop()
		s.sampler = nil
	}
	if s.cpp != nil {
		// The controller went away mid-window: end perf, drop its data.
		_, _ = s.cpp.Stop(context.Background())
		s.cpp = nil
	}
	_, rerr := s.Revert()
	cerr := s.closeJournal()
	// A clean session leaves nothing on the node: its journal was retired
	// above, and the directory goes too unless another session's journal
	// (or this one's, still pending) is in it.
	removeEmptyDir(s.cfg.JournalDir)
	return errors.Join(serr, rerr, cerr)
}

// openJournal opens a node journal in dir. Another session that ends
// may remove the (then empty) directory between the journal package's
// MkdirAll and its create; that shows as a missing directory, and one
// more attempt re-creates it.
func openJournal(dir, id string) (*journal.Journal, error) {
	var err error
	for range 3 {
		var j *journal.Journal
		if j, err = journal.Open(dir, id, "cnb-"); err == nil {
			return j, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	return nil, err
}

// removeEmptyDir removes the journal directory if it holds nothing, and
// then DefaultJournalDir when dir was the node's directory under it, so
// a clean run leaves no empty /run/cnibench/agent/NODE behind. rmdir
// fails on a directory that is not empty, which is what keeps the
// journals of other (live or dead) sessions: that error is expected.
func removeEmptyDir(dir string) {
	if dir == "" || os.Remove(dir) != nil {
		return
	}
	if filepath.Dir(filepath.Clean(dir)) == DefaultJournalDir {
		_ = os.Remove(DefaultJournalDir)
	}
}

// Handle answers one request.
func (s *Server) Handle(req Request) Response {
	resp := Response{ID: req.ID}
	if req.Run != s.cfg.Run {
		// A session is one run's: a request naming another run (or none)
		// is refused before anything is read or changed.
		resp.Error = fmt.Sprintf("request for run %q refused: this session serves run %q", req.Run, s.cfg.Run)
		return resp
	}
	var err error
	switch req.Op {
	case OpPing:
		resp.Value = "pong"
	case OpHello:
		resp.Value = version.Version
	case OpRead:
		resp.Value, err = s.fs.Read(req.Netns, req.FS, req.Path)
	case OpWrite:
		if err = s.cfg.writable(req.FS, req.Path); err == nil {
			err = s.write(req.Netns, req.FS, req.Path, req.Value)
		}
	case OpList:
		resp.List, err = s.fs.List(req.Netns, req.FS, req.Path)
	case OpHostVeth:
		resp.Value, err = s.hostVeth(req.Netns, req.Iface)
	case OpAddrDev:
		resp.Value, err = s.cfg.AddrDev(req.Value)
	case OpLinks:
		resp.List, err = s.fs.List(req.Netns, tune.FSSysfs, "class/net")
	case OpSampleStart:
		if s.sampler == nil {
			s.sampler = metrics.NewSampler(s.cfg.ProcRoot, s.cfg.SampleInterval)
		}
		err = s.sampler.Start()
	case OpSampleStop:
		if s.sampler == nil {
			err = errors.New("sampler not started")
			break
		}
		var w metrics.Window
		w, err = s.sampler.Stop()
		resp.Window = &w
	case OpCNIConf:
		resp.Files, err = readConfDir(s.cfg.CNIConfDir)
	case OpIptables:
		resp.Counts, err = s.cfg.Iptables()
	case OpRevert:
		resp.Reverted, err = s.Revert()
	case OpReplay:
		resp.Reverted, err = Replay(s.cfg.JournalDir, s.fs)
	case OpInfo:
		resp.Info, err = nodeInfo()
	case OpIfStats:
		resp.IfStats, err = s.ifStats(req.Ifaces)
	case OpMemory:
		resp.Number, err = metrics.MemoryPercent(path.Join(s.cfg.ProcRoot, "meminfo"))
	case OpCPPStart:
		err = s.cppStart(req.Ifaces)
	case OpCPPStop:
		if s.cpp == nil {
			err = errors.New("cpu cost per packet: not started")
			break
		}
		var res cpp.Result
		res, err = s.cpp.Stop(context.Background())
		s.cpp = nil
		resp.CPP = &res
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
	if err != nil {
		resp.Error = err.Error()
		resp.Kind = errorKind(err)
	}
	return resp
}

func key(ns, fs, p string) string { return ns + "|" + fs + "|" + p }

// write journals the knob's first old value, then writes. Writing the old
// value back closes the entry.
func (s *Server) write(ns, fsKind, p, value string) error {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	k := key(ns, fsKind, p)
	if ps, ok := s.pending[k]; ok {
		if tune.Equal(p, ps.set.New, value) {
			return s.fs.Write(ns, fsKind, p, value)
		}
		if tune.Equal(p, ps.set.Old, value) {
			if err := s.fs.Write(ns, fsKind, p, value); err != nil {
				return err
			}
			delete(s.pending, k)
			return s.j.MarkDone(ps.seq)
		}
		// A new value for a knob already changed: journal it (same Old,
		// new New) before writing, so a replay's compare-before-swap
		// recognises the value as the session's; the earlier entry is
		// closed only after the write, so a crash in between leaves one
		// of the two matching what the knob holds.
		set := journal.Set{Netns: ns, FS: fsKind, Path: p, Old: ps.set.Old, New: value}
		seq, err := s.j.RecordSet(set)
		if err != nil {
			return fmt.Errorf("node journal: %w", err)
		}
		s.pending[k] = pendingSet{seq: seq, set: set}
		if err := s.fs.Write(ns, fsKind, p, value); err != nil {
			return err
		}
		return s.j.MarkDone(ps.seq)
	}
	old, err := s.fs.Read(ns, fsKind, p)
	if err != nil {
		return fmt.Errorf("read old value: %w", err)
	}
	if tune.Equal(p, old, value) {
		return nil
	}
	if s.j == nil {
		if s.j, err = openJournal(s.cfg.JournalDir, s.cfg.Run+"_"+strconv.Itoa(os.Getpid())); err != nil {
			return fmt.Errorf("node journal: %w", err)
		}
	}
	set := journal.Set{Netns: ns, FS: fsKind, Path: p, Old: old, New: value}
	seq, err := s.j.RecordSet(set)
	if err != nil {
		return fmt.Errorf("node journal: %w", err)
	}
	s.pending[k] = pendingSet{seq: seq, set: set}
	return s.fs.Write(ns, fsKind, p, value)
}

// Revert writes back every value the session still has changed, newest
// first. A value whose namespace is gone counts as reverted.
func (s *Server) Revert() (int, error) {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	var list []pendingSet
	for _, ps := range s.pending {
		list = append(list, ps)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].seq > list[j].seq })
	var errs []error
	n := 0
	for _, ps := range list {
		st := ps.set
		// Compare before swap: only a value that still holds the
		// session's last write is put back; another writer's is left
		// alone (and reported), as cleanup does.
		now, err := s.fs.Read(st.Netns, st.FS, st.Path)
		switch {
		case err == nil && !tune.Equal(st.Path, now, st.New) && !tune.Equal(st.Path, now, st.Old):
			errs = append(errs, fmt.Errorf("revert %s %s: changed by someone else since (found %q); left alone", st.Netns, st.Path, now))
		case err == nil && !tune.Equal(st.Path, now, st.Old):
			err = s.fs.Write(st.Netns, st.FS, st.Path, st.Old)
		}
		if err != nil && !errors.Is(err, tune.ErrGone) {
			errs = append(errs, fmt.Errorf("revert %s %s to %q: %w", st.Netns, st.Path, st.Old, err))
			continue
		}
		if err := s.j.MarkDone(ps.seq); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(s.pending, key(st.Netns, st.FS, st.Path))
		n++
	}
	return n, errors.Join(errs...)
}

func (s *Server) closeJournal() error {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	if s.j == nil {
		return nil
	}
	err := s.j.Close()
	s.j = nil
	return err
}

// Replay reverts the journals in dir whose session is dead and removes
// them; it returns how many values it wrote back.
func Replay(dir string, fs tune.FS) (int, error) {
	stale, err := journal.Stale(dir)
	errs := []error{err}
	n := 0
	for _, r := range stale {
		pending := len(r.Pending())
		if rerr := tune.RevertReplay(r, fs); rerr != nil {
			errs = append(errs, fmt.Errorf("journal %s: %w", r.Header.RunID, rerr))
			r.Release()
			continue
		}
		n += pending
		if rerr := r.Remove(); rerr != nil {
			errs = append(errs, rerr)
		}
	}
	return n, errors.Join(errs...)
}

// resolveIfaces maps devices named by the controller ("pod:NS/NAME")
// to namespaces this agent can enter.
func (s *Server) resolveIfaces(ifs []netns.Iface) ([]netns.Iface, error) {
	out := make([]netns.Iface, len(ifs))
	for i, ifc := range ifs {
		name, err := s.fs.resolve(ifc.Netns, tune.FSSysfs)
		if err != nil {
			return nil, fmt.Errorf("device %s in %q: %w", ifc.Name, ifc.Netns, err)
		}
		out[i] = netns.Iface{Netns: name, Name: ifc.Name}
	}
	return out, nil
}

func (s *Server) ifStats(ifs []netns.Iface) ([]ifstats.Counters, error) {
	res, err := s.resolveIfaces(ifs)
	if err != nil {
		return nil, err
	}
	out := make([]ifstats.Counters, len(res))
	for i, ifc := range res {
		if out[i], err = s.cfg.IfStats(ifc); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cppStart starts perf on this node for one window; packets are counted
// on ifs (the measured server pods' eth0).
func (s *Server) cppStart(ifs []netns.Iface) error {
	if s.cpp != nil {
		return errors.New("cpu cost per packet: a window is already open")
	}
	res, err := s.resolveIfaces(ifs)
	if err != nil {
		return err
	}
	rec, err := s.cfg.CPP(res)
	if err != nil {
		return err
	}
	if err := rec.Start(context.Background()); err != nil {
		return err
	}
	s.cpp = rec
	return nil
}

// hostVeth finds the host-side peer of a veth: the device of the node
// whose ifindex is the pod device's iflink.
func (s *Server) hostVeth(ns, iface string) (string, error) {
	if iface == "" {
		iface = "eth0"
	}
	peer, err := s.fs.Read(ns, tune.FSSysfs, path.Join("class/net", iface, "iflink"))
	if err != nil {
		return "", err
	}
	devs, err := s.fs.List("", tune.FSSysfs, "class/net")
	if err != nil {
		return "", err
	}
	for _, d := range devs {
		idx, err := s.fs.Read("", tune.FSSysfs, path.Join("class/net", d, "ifindex"))
		if err == nil && strings.TrimSpace(idx) == strings.TrimSpace(peer) {
			return d, nil
		}
	}
	return "", fmt.Errorf("no device of the node has ifindex %s (peer of %s in %s)", peer, iface, ns)
}

// nodeFS resolves pod namespace references before using the base FS.
type nodeFS struct {
	base tune.FS
	pods PodResolver
	host *hostProc // nil: /proc/sys as this process sees it
}

func (f *nodeFS) resolve(ns, fsKind string) (string, error) {
	if ns == "" {
		return "", nil
	}
	pod, ok := strings.CutPrefix(ns, PodNetnsPrefix)
	if !ok {
		return "", fmt.Errorf("netns %q: the agent knows the node (\"\") and pods (%sNS/NAME): %w", ns, PodNetnsPrefix, tune.ErrBadPath)
	}
	name, err := f.pods.Netns(pod)
	if err != nil {
		return "", err
	}
	return name, nil
}

func (f *nodeFS) Read(ns, fsKind, p string) (string, error) {
	name, err := f.resolve(ns, fsKind)
	if err != nil {
		return "", err
	}
	var v string
	err = f.proc(ns, fsKind, func() (err error) { v, err = f.base.Read(name, fsKind, p); return err })
	return v, err
}

func (f *nodeFS) Write(ns, fsKind, p, v string) error {
	name, err := f.resolve(ns, fsKind)
	if err != nil {
		return err
	}
	return f.proc(ns, fsKind, func() error { return f.base.Write(name, fsKind, p, v) })
}

func (f *nodeFS) List(ns, fsKind, dir string) ([]string, error) {
	name, err := f.resolve(ns, fsKind)
	if err != nil {
		return nil, err
	}
	var out []string
	err = f.proc(ns, fsKind, func() (err error) { out, err = f.base.List(name, fsKind, dir); return err })
	return out, err
}

func addrDev(ip string) (string, error) {
	want := net.ParseIP(ip)
	if want == nil {
		return "", fmt.Errorf("bad IP %q", ip)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, ifc := range ifs {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(want) {
				return ifc.Name, nil
			}
		}
	}
	return "", fmt.Errorf("no device of the node holds %s", ip)
}

// readConfDir returns the regular files of dir (at most 64 KiB each).
func readConfDir(dir string) (map[string]string, error) {
	if dir == "" {
		return nil, errors.New("no CNI config dir mounted in the agent")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if len(b) > 64<<10 {
			b = b[:64<<10]
		}
		out[e.Name()] = string(b)
	}
	return out, nil
}

func nodeInfo() (*NodeInfo, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	var set unix.CPUSet
	n := 0
	if unix.SchedGetaffinity(0, &set) == nil {
		n = set.Count()
	}
	return &NodeInfo{Hostname: host, Kernel: unix.ByteSliceToString(u.Release[:]), CPUs: n}, nil
}
