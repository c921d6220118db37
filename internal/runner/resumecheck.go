package runner

// The checks a --resume makes: that the interrupted run's trials would
// compare with this one's (the same build, engine, study, machine or
// server node, and the settings that move numbers), refusing with what
// differs, the run's value and this one's.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/version"
)

// sameBuild refuses to resume a run made with another engine or
// cnibench build, whose trials would not compare.
func sameBuild(was results.Env, engine string) error {
	return firstDiffering(was, []check{
		{"engine", was.Engine, engine},
		{"cnibench version", was.Version, version.Version},
	})
}

// unnamedBuild is a note when the interrupted run's version and this
// one's, equal (sameBuild), do not name one build (version.Names): a
// "dev" or dirty build may hold other code under the same name, so the
// trials before and after the resume may not compare, and nothing here
// can tell. Refusing would stop every resume of a development build.
func unnamedBuild(was, is string) string {
	if version.Names(was) && version.Names(is) {
		return ""
	}
	return fmt.Sprintf("resumed with cnibench version %q as the run was made with, but that version does not name one build (built without its commit, or with uncommitted changes), so the trials before and after the resume may come from different code: build from a clean checkout (make build) for runs that resume", is)
}

// thisMachine refuses a run made on another machine than this one
// (host, kernel, CPUs), or with other settings that move numbers
// (sharedSettings), as machineEnv finds them for study s. previousRun
// asks it before preflight for the local engine, whose nodes are this
// machine.
func thisMachine(was results.Env, s *study.Study) error {
	now := machineEnv(false, s)
	return firstDiffering(was, append([]check{
		{"host", was.Hostname, now.Hostname},
		{"kernel", was.Kernel, now.Kernel},
		{"CPU model", was.CPUModel, now.CPUModel},
		{"CPU count", fmt.Sprint(was.CPUs), fmt.Sprint(now.CPUs)},
	}, sharedSettings("", was, now)...))
}

// sharedSettings are the settings beyond the machine's identity that a
// resumed run must share with the interrupted one, as compare lists
// them among what moves numbers (compare.Differences): how the CPUs
// idle (a round trip waits for a core to wake) and the versions of the
// tools that measure. Before, a resume checked neither and env.json took
// this run's values, so a mix of trials of an old and a new iperf3 was
// recorded as all of the new. Only what both runs recorded is held: a
// blank (a run before env.json kept cpuidle, a tool that printed no
// version) is unknown, and differs from nothing. "go" is left out: it
// is cnibench's own toolchain, which the version check stands for
// (sameBuild; an unnamed build is noted). node prefixes the CPU idle
// check's name ("server node " on a cluster).
func sharedSettings(node string, was, is results.Env) []check {
	var out []check
	if was.CPUIdle != nil && is.CPUIdle != nil {
		out = append(out, check{node + "CPU idle", was.CPUIdle.String(), is.CPUIdle.String()})
	}
	for _, name := range slices.Sorted(maps.Keys(was.Tools)) {
		if v := is.Tools[name]; name != "go" && was.Tools[name] != "" && v != "" {
			out = append(out, check{"tool " + name, was.Tools[name], v})
		}
	}
	return out
}

// check is one setting of the interrupted run (was) and of this one (is).
type check struct{ what, was, is string }

// firstDiffering is the refusal of the first check whose settings differ.
func firstDiffering(was results.Env, checks []check) error {
	for _, c := range checks {
		if c.was == c.is {
			continue
		}
		what := "its trials would not compare; start a new run"
		if c.what == "engine" {
			what = "resume it with the engine and flags it was started with (--engine " + was.Engine + ")"
		}
		return fmt.Errorf("the run was made with %s %q, this one would be %q: %s", c.what, c.was, c.is, what)
	}
	return nil
}

// remoteResumeNote records, in the resumed run's env.json, the server
// node the interrupted run measured on, which the resumed run's own
// Describe then overwrites: a reader compares the two. A remote engine's
// env.json describes the cluster's server node, not this machine (any
// machine that reaches the cluster), so a kube resume is checked against
// it once the cluster is up (sameNode), and the note is added then, once
// the check passed (writeEnv): a resume that builds no cluster checked
// nothing and says nothing of it.
func remoteResumeNote(was results.Env) string {
	cni := "unknown"
	if was.CNI != nil {
		cni = was.CNI.String()
	}
	client := ""
	if c := was.ClientNode; c != nil {
		client = fmt.Sprintf(", client node %s (host %s, kernel %s, %s CPUs, %s)", c.Name, orUnknown(c.Hostname), orUnknown(c.Kernel),
			orUnknown(cpuCount(c.CPUs)), sharedKernelWords[was.SharedKernel])
	}
	return fmt.Sprintf("resumed a %s run whose server node was host %s, kernel %s, %s CPUs, CNI %s%s: checked against this run's "+
		"(above) once its cluster was up, before any trial (a node or CNI that differs is refused)",
		was.Engine, orUnknown(was.Hostname), orUnknown(was.Kernel), orUnknown(cpuCount(was.CPUs)), cni, client)
}

// sharedKernelWords say whether the client node ran on the server
// node's kernel (results.Env.SharedKernel), in the resume note.
var sharedKernelWords = map[bool]string{false: "its own kernel", true: "the server node's kernel"}

// clientNodeChecks are sameNode's checks of the client node (the kube
// engine records it, results.Env.ClientNode): its name, host, kernel,
// CPU count and whether it shares the server node's kernel. A run
// whose env.json has no client node (the local engine's, or one made
// before it was recorded) is held to none of them: clientUnchecked
// says so.
func clientNodeChecks(was, is results.Env) []check {
	a, b := was.ClientNode, is.ClientNode
	if a == nil || b == nil {
		return nil
	}
	yesNo := map[bool]string{false: "no", true: "yes"}
	return []check{
		{"client node", a.Name, b.Name},
		{"client node host", a.Hostname, b.Hostname},
		{"client node kernel", a.Kernel, b.Kernel},
		{"client node CPU count", cpuCount(a.CPUs), cpuCount(b.CPUs)},
		{"client node on the server node's kernel", yesNo[was.SharedKernel], yesNo[is.SharedKernel]},
	}
}

// clientUnchecked is the warning of a resumed cluster run (was: the
// interrupted run's env.json; nil for any other run) whose env.json
// does not record its client node (made before cnibench recorded
// client_node): sameNode could not check that this run's client node,
// is, is the one the kept trials were measured with. "" when it could.
func clientUnchecked(was *results.Env, is results.Env) string {
	if was == nil || was.ClientNode != nil || is.ClientNode == nil {
		return ""
	}
	c := is.ClientNode
	return fmt.Sprintf("--resume: the interrupted run's %s does not record its client node (made before cnibench recorded client_node), "+
		"so this resume could not check that client node %s (host %s, kernel %s, %s CPUs) is the one its kept trials were measured with "+
		"(its notes name the node it used); if it is another, the trials before and after the resume do not compare",
		results.EnvFile, c.Name, orUnknown(c.Hostname), orUnknown(c.Kernel), orUnknown(cpuCount(c.CPUs)))
}

// cpuCount is a CPU count as sameNode compares it: "" when env.json has
// none (0: the node's agent could not say), which holds the other run
// to nothing.
func cpuCount(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// orUnknown is s, or "unknown" when env.json left it blank.
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// sameStudy refuses a study.yaml changed after the run wrote it (by
// hand: a longer duration), whose trials would not compare with the
// kept ones, and returns its sum. A run recorded before env.json kept
// the sum is not refused for it.
func sameStudy(old *results.Run) (string, error) {
	sum := studySum(old.Study)
	if was := old.Env.StudySHA256; was != "" && was != sum {
		return "", fmt.Errorf("%s was changed after the run wrote it (SHA-256 %s, now %s): the kept trials were measured with the "+
			"study as written, so they would not compare with new ones; put it back, or run the changed study in a new directory",
			results.StudyFile, was[:12], sum[:12])
	}
	return sum, nil
}

// studySum is the hex SHA-256 of a study file's bytes.
func studySum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ResumeRefusedError is a --resume refused once a cluster is up, before
// any trial: a node's or datapath's facts differ from the interrupted
// run's, and its trials would not compare with the kept ones. It is bad
// input like the resume refusals found before preflight (exit 2): the
// run changed nothing that stays (its cluster is torn down, env.json is
// the interrupted run's), and resuming again, which a failed run's
// message suggests, would be refused the same way.
type ResumeRefusedError struct{ Err error }

func (e *ResumeRefusedError) Error() string { return e.Err.Error() }
func (e *ResumeRefusedError) Unwrap() error { return e.Err }

// IsResumeRefused reports whether err holds a ResumeRefusedError.
func IsResumeRefused(err error) bool {
	var r *ResumeRefusedError
	return errors.As(err, &r)
}

// sameNode refuses to go on with a resumed cluster run (was: the
// interrupted run's env.json; nil for any other run) whose nodes, as
// the engine now describes them (is), differ from the interrupted
// run's: another server node host, kernel, CPU count or CNI, another
// client node (its name, host, kernel, CPU count, or its sharing the
// server node's kernel or not: clientNodeChecks), or other settings
// that move numbers (the server node's CPU idle, the image's tool
// versions: sharedSettings) would measure trials that do not compare
// with the kept ones. A remote engine's nodes are known only once the
// cluster is up, so this runs there, before any trial.
func sameNode(was *results.Env, is results.Env) error {
	if was == nil {
		return nil
	}
	cni := func(e results.Env) string {
		if e.CNI == nil {
			return "" // not detected: nothing to hold the other to
		}
		return e.CNI.String()
	}
	for _, c := range append([]check{
		{"server node host", was.Hostname, is.Hostname},
		{"server node kernel", was.Kernel, is.Kernel},
		{"server node CPU count", cpuCount(was.CPUs), cpuCount(is.CPUs)},
		{"CNI", cni(*was), cni(is)},
	}, append(clientNodeChecks(*was, is), sharedSettings("server node ", *was, is)...)...) {
		if c.was != "" && c.is != "" && c.was != c.is {
			return &ResumeRefusedError{fmt.Errorf("--resume: the interrupted run measured with %s %q, this cluster's is %q: its trials would not compare "+
				"with the kept ones; resume it on the cluster and nodes it ran on (--server-node, --client-node), or start a new run", c.what, c.was, c.is)}
		}
	}
	return nil
}

// sameBridgeNetfilter refuses to go on with a resumed run whose datapath
// name, just built, passes its bridged frames through iptables where the
// interrupted run's did not, or the other way round (is against prior,
// the interrupted run's datapaths' facts; nil for a run not resumed):
// the same datapath then costs another amount per packet (compare lists
// it), and br_netfilter, which anything on the machine may load or
// unload, decides it. It is known only once the datapath is built (its
// knobs, or preflight's probes, may load br_netfilter), so this runs
// there, before any of its trials. A blank value is unknown and holds
// the other to nothing.
func sameBridgeNetfilter(prior map[string]results.DatapathEnv, name, is string) error {
	was := prior[name].BridgeNFCallIPTables
	if was == "" || is == "" || was == is {
		return nil
	}
	return &ResumeRefusedError{fmt.Errorf("--resume: the interrupted run measured datapath %s with bridge-nf-call-iptables %q, this one's is %q "+
		"(br_netfilter loaded or unloaded since, or the sysctl set): its trials would not compare with the kept ones; "+
		"put it back as it was, or start a new run", name, was, is)}
}

// putBackEnv writes back the interrupted run's env.json when err refuses
// this resume (ResumeRefusedError) after this run's first cluster wrote
// its own (writeEnv): the refused run measured nothing, and its run ID,
// start and resume note would otherwise be what the next resume keeps.
// Its run ID stays in run_ids (recordPart): its cluster was up, and a
// teardown that fails leaves objects under it.
func (r *run) putBackEnv(err error) error {
	if r.keptEnv == nil || !IsResumeRefused(err) {
		return nil
	}
	r.env = *r.keptEnv
	return r.out.WriteEnv(r.env)
}
