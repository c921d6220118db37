package kube

// How clients address servers. The papers' clients used the Service DNS
// name; a cluster without working DNS (the test cluster has none) can
// still be measured through the Service's ClusterIP, the same datapath
// minus one lookup before each connection. The choice is made once per
// run, before any workload pod exists, from two pieces of evidence:
//
//  1. the cluster DNS Service (label k8s-app=kube-dns in kube-system,
//     which kube-dns and CoreDNS both carry) and its ready endpoints — a
//     cheap API read that settles "no DNS at all" without a pod (when
//     the caller may not read kube-system it is skipped, not fatal);
//  2. a real lookup from a pod on the client node: a throw-away probe pod
//     with the client pods' spec (same image, node and DNS policy) runs
//     `getent hosts kubernetes.default.svc`, which goes through the
//     pod's resolv.conf search list and glibc's resolver exactly as the
//     tools' getaddrinfo does. getent prints the fully qualified name it
//     found, which gives the cluster domain without asking the kubelet.
//
// With DNS, every Service is looked up again from its client pod before
// the first trial uses it (a new Service's record appears a moment after
// the Service), and must resolve to its own ClusterIP.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster DNS as kube-dns and CoreDNS deploy it.
const (
	DNSNamespace = "kube-system"
	DNSLabel     = "k8s-app=kube-dns"
	// dnsProbeName is looked up from the probe pod: the API server's
	// Service exists in every cluster.
	dnsProbeName = "kubernetes.default.svc"
	// lookupTimeout bounds one getent: glibc retries a silent server
	// for 5 s per attempt and search domain.
	lookupTimeout = 20 * time.Second
	// defaultResolveWait bounds waiting for a new Service's DNS record.
	defaultResolveWait = 30 * time.Second
)

// Addressing is how the run's clients reach server pods.
type Addressing struct {
	// DNS is true when clients are given Service DNS names
	// (SVC.NS.svc.Domain), false when they are given ClusterIPs.
	DNS bool
	// Domain is the cluster domain learned from the lookup.
	Domain string
	// Why is the evidence, for env.json.
	Why string
}

// Note is the env.json note.
func (a Addressing) Note() string {
	if a.DNS {
		return "kube engine: clients address servers by their Service DNS name (SVC.NAMESPACE.svc." + a.Domain + "), as the papers did: " + a.Why
	}
	return "kube engine: clients address servers by their Service ClusterIP, because cluster DNS does not work here: " + a.Why
}

// ServiceName is the DNS name of Service svc in namespace ns.
func (a Addressing) ServiceName(svc, ns string) string {
	return svc + "." + ns + ".svc." + a.Domain
}

// errNoLookup marks a lookup that ran and found nothing (as opposed to a
// pod that could not be reached).
var errNoLookup = errors.New("name not resolved")

// decideAddressing chooses DNS or ClusterIP; see the file notes. An error
// is returned only when the probe pod cannot be run at all (which the
// client pods could not either).
func (c *Cluster) decideAddressing(ctx context.Context, clientNode string) (Addressing, error) {
	var ev []string
	svcs, err := c.cs.CoreV1().Services(DNSNamespace).List(ctx, metav1.ListOptions{LabelSelector: DNSLabel})
	switch {
	case err != nil:
		ev = append(ev, fmt.Sprintf("could not read the cluster DNS Service (%s in %s: %v), so only the lookup decides", DNSLabel, DNSNamespace, shortAPIError(err)))
	case len(svcs.Items) == 0:
		return Addressing{Why: fmt.Sprintf("no cluster DNS Service (label %s) in %s", DNSLabel, DNSNamespace)}, nil
	default:
		svc := svcs.Items[0]
		ready, err := readyEndpoints(ctx, c, svc.Name)
		switch {
		case err != nil:
			ev = append(ev, fmt.Sprintf("cluster DNS Service %s/%s (%s); its endpoints could not be read (%v)", DNSNamespace, svc.Name, svc.Spec.ClusterIP, shortAPIError(err)))
		case ready == 0:
			return Addressing{Why: fmt.Sprintf("the cluster DNS Service %s/%s has no ready endpoints", DNSNamespace, svc.Name)}, nil
		default:
			ev = append(ev, fmt.Sprintf("cluster DNS Service %s/%s (%s) has %d ready endpoint(s)", DNSNamespace, svc.Name, svc.Spec.ClusterIP, ready))
		}
	}
	name, err := c.probeLookup(ctx, clientNode)
	if errors.Is(err, errNoLookup) {
		ev = append(ev, err.Error())
		return Addressing{Why: strings.Join(ev, "; ")}, nil
	}
	if err != nil {
		return Addressing{}, err
	}
	domain, ok := strings.CutPrefix(name, dnsProbeName+".")
	if !ok || domain == "" {
		ev = append(ev, fmt.Sprintf("getent hosts %s answered the name %q, from which no cluster domain follows", dnsProbeName, name))
		return Addressing{Why: strings.Join(ev, "; ")}, nil
	}
	ev = append(ev, fmt.Sprintf("`getent hosts %s` in a pod on node %s answered %s", dnsProbeName, clientNode, name))
	return Addressing{DNS: true, Domain: domain, Why: strings.Join(ev, "; ")}, nil
}

// readyEndpoints counts the ready endpoints of Service svc in
// DNSNamespace from its EndpointSlices.
func readyEndpoints(ctx context.Context, c *Cluster, svc string) (int, error) {
	list, err := c.cs.DiscoveryV1().EndpointSlices(DNSNamespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			// Ready unset means ready (the API's documented default).
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n++
			}
		}
	}
	return n, nil
}

// probeLookup runs the lookup of dnsProbeName in a throw-away pod on the
// client node and returns the name getent printed. The pod is deleted
// right after (Close waits for it with the rest of the run's pods).
func (c *Cluster) probeLookup(ctx context.Context, node string) (string, error) {
	pod := c.cfg.ProbePod(node)
	if _, err := c.cs.CoreV1().Pods(c.cfg.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create DNS probe pod: %w", err)
	}
	defer func() {
		del, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.cs.CoreV1().Pods(c.cfg.Namespace).Delete(del, pod.Name, metav1.DeleteOptions{})
	}()
	if err := c.waitPods(ctx, []string{pod.Name}); err != nil {
		return "", fmt.Errorf("DNS probe: %w", err)
	}
	p := &Pod{ns: c.cfg.Namespace, name: pod.Name, node: node, exec: c.exec}
	_, name, err := lookup(ctx, p, dnsProbeName)
	return name, err
}

// lookup runs `getent hosts NAME` in pod p and returns the address and
// the fully qualified name it printed. A lookup that ran and failed (exit
// 2: not found, or no server answered in time) is errNoLookup; an exec
// that could not run at all is another error.
func lookup(parent context.Context, p *Pod, name string) (net.IP, string, error) {
	ctx, cancel := context.WithTimeout(parent, lookupTimeout)
	defer cancel()
	proc, err := p.Start(ctx, []string{"getent", "hosts", name})
	if err != nil {
		return nil, "", err
	}
	out, stderr, err := proc.Wait()
	if err != nil {
		var ce *ExitCodeError
		switch {
		case parent.Err() != nil:
			// The run is stopping (Ctrl-C): that is no answer about DNS.
			return nil, "", parent.Err()
		case errors.As(err, &ce) && ce.Code == 2:
			return nil, "", fmt.Errorf("%w: `getent hosts %s` in pod %s found no address", errNoLookup, name, p.name)
		case ctx.Err() != nil:
			return nil, "", fmt.Errorf("%w: `getent hosts %s` in pod %s got no answer within %v", errNoLookup, name, p.name, lookupTimeout)
		case errors.As(err, &ce) && ce.Code == 127:
			return nil, "", fmt.Errorf("getent is not in the image (%s): rebuild it with `cnibench kube image`", strings.TrimSpace(string(stderr)))
		}
		return nil, "", fmt.Errorf("getent hosts %s in pod %s: %w", name, p.name, err)
	}
	ip, fqdn, ok := ParseGetentHosts(out)
	if !ok {
		return nil, "", fmt.Errorf("%w: `getent hosts %s` in pod %s printed %q", errNoLookup, name, p.name, clipOut(out))
	}
	return ip, fqdn, nil
}

// ParseGetentHosts reads the first line of `getent hosts NAME`: "ADDRESS
// CANONICAL-NAME [ALIAS...]".
func ParseGetentHosts(out []byte) (net.IP, string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		ip := net.ParseIP(f[0])
		if ip == nil || len(f) < 2 {
			return nil, "", false
		}
		return ip, strings.TrimSuffix(f[1], "."), true
	}
	return nil, "", false
}

// awaitResolves looks svc's DNS name up from pod p until it resolves to
// the Service's ClusterIP: records of a new Service appear a moment after
// it does.
func (c *Cluster) awaitResolves(ctx context.Context, p *Pod, name string, want net.IP) error {
	deadline := time.Now().Add(c.resolveWait)
	var last error
	for {
		ip, _, err := lookup(ctx, p, name)
		switch {
		case err == nil && ip.Equal(want):
			return nil
		case err == nil:
			last = fmt.Errorf("it resolves to %s, not the Service's ClusterIP %s", ip, want)
		case errors.Is(err, errNoLookup):
			last = err
		default:
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster DNS answered at the start of the run, but %s does not resolve from pod %s after %v: %w", name, p.name, c.resolveWait, last)
		}
		if err := sleepCtx(ctx, c.poll); err != nil {
			return err
		}
	}
}

// shortAPIError keeps the reason of an API error (Forbidden, NotFound...)
// rather than its full message.
func shortAPIError(err error) string {
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		return string(r)
	}
	return err.Error()
}

func clipOut(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// waitPods waits until the named pods of the run are ready.
func (c *Cluster) waitPods(ctx context.Context, names []string) error {
	deadline := time.Now().Add(c.cfg.Timeout)
	for {
		var waiting []string
		for _, n := range names {
			p, err := c.cs.CoreV1().Pods(c.cfg.Namespace).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("pod %s: %w", n, err)
			}
			ok, why := podReady(p)
			if ok {
				continue
			}
			if f := fatalProblem([]string{why}); f != "" {
				return fmt.Errorf("pod %s on %s: %s", n, p.Spec.NodeName, f)
			}
			waiting = append(waiting, n+": "+orPhase(why, p))
		}
		if len(waiting) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pods not ready after %v: %s", c.cfg.Timeout, strings.Join(waiting, "; "))
		}
		if err := sleepCtx(ctx, c.poll); err != nil {
			return err
		}
	}
}
