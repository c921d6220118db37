package ab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"text/template"
	"time"
)

// nginx serves the body from a private prefix directory: its own config,
// pid, error log and temp paths, so nothing of the host's nginx (config,
// logs, service) is read or touched. The local engine's pods share this
// machine's filesystem, so the driver writes the site here; a kube pod
// has its own, so there Serve (`cnibench agent nginx`) writes it inside
// the pod and runs nginx next to it.
var confTmpl = template.Must(template.New("nginx.conf").Parse(`# written by cnibench for one HTTP trial
daemon off;
worker_processes 1;
worker_rlimit_nofile {{.Files}};
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/error.log warn;
events { worker_connections {{.Conns}}; }
http {
  access_log off;
  client_body_temp_path {{.Dir}}/tmp-body;
  proxy_temp_path {{.Dir}}/tmp-proxy;
  fastcgi_temp_path {{.Dir}}/tmp-fastcgi;
  uwsgi_temp_path {{.Dir}}/tmp-uwsgi;
  scgi_temp_path {{.Dir}}/tmp-scgi;
  sendfile on;
  keepalive_timeout 0;
  server {
    listen {{.Addr}} backlog=65535;
    root {{.Dir}}/www;
    location / { }
  }
}
`))

// BodyPath is the URL path of the served body.
const BodyPath = "/body"

// site is one nginx instance's prefix directory.
type site struct {
	Dir  string
	Addr string
	// Conns is worker_connections and Files worker_rlimit_nofile (see
	// workerConns).
	Conns, Files int
}

// workerConns is nginx's worker_connections: ab's most concurrent
// requests, each a connection of its own (no keep-alive), plus the
// listening socket, with room to spare. workerFiles is the open-file
// limit the worker needs for them (worker_rlimit_nofile): a socket and
// the body's file per request being sent. Without the directive the
// worker keeps the soft limit it inherits, often 1024, and refuses
// connections ("accept4() failed (24: Too many open files)") at a
// concurrency of about 500.
// filesPerRequest and filesBase are what preflight bounds concurrency by
// (Describe: spec.Tool.FilesPerRequest).
const (
	filesPerRequest = 2
	filesBase       = 64
	workerConns     = MaxConcurrency + 64
	workerFiles     = filesPerRequest*workerConns + filesBase
)

// siteFiles is worker_rlimit_nofile: workerFiles, or the hard limit
// nginx inherits from this process where that is lower. nginx sets the
// soft and hard limit both to it, and above the hard limit only a
// process with CAP_SYS_RESOURCE may (a container's root may not): the
// worker would log an alert and keep the soft limit it inherited.
func siteFiles() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Max >= workerFiles {
		return workerFiles
	}
	return int(lim.Max)
}

// newSite writes the config (nginx listening on listen, "IP:PORT") and
// a body of size bytes under a new temporary directory, or links body
// there (another site's of the same size: "" for none). Directories are
// world-readable because nginx's workers drop root for nobody.
func newSite(listen string, size int64, body string) (*site, error) {
	dir, err := os.MkdirTemp("", "cnb-http-")
	if err != nil {
		return nil, err
	}
	s := &site{Dir: dir, Addr: listen, Conns: workerConns, Files: siteFiles()}
	fail := func(err error) (*site, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(err)
	}
	www := filepath.Join(dir, "www")
	if err := os.Mkdir(www, 0o755); err != nil {
		return fail(err)
	}
	// The servers of one trial serve one body: 250 servers of a 64 MiB
	// body wrote 16 GiB to the run's temporary directory every trial.
	if body == "" || os.Link(body, filepath.Join(www, "body")) != nil {
		if err := writeBody(filepath.Join(www, "body"), size); err != nil {
			return fail(err)
		}
	}
	var b bytes.Buffer
	if err := confTmpl.Execute(&b, s); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), b.Bytes(), 0o644); err != nil {
		return fail(err)
	}
	return s, nil
}

// writeBody writes size bytes of a repeating pattern (not compressible
// away: nginx does not compress here anyway).
func writeBody(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("cnibench-http-body\n"), 4096)
	for left := size; left > 0; {
		n := min(left, int64(len(chunk)))
		if _, err := f.Write(chunk[:n]); err != nil {
			f.Close()
			return err
		}
		left -= n
	}
	return f.Close()
}

// body is the path of the body the site serves.
func (s *site) body() string { return filepath.Join(s.Dir, "www", "body") }

func (s *site) argv(bin string) []string {
	return []string{bin, "-e", filepath.Join(s.Dir, "error.log"), "-p", s.Dir + "/", "-c", filepath.Join(s.Dir, "nginx.conf")}
}

// errorLog returns the tail of nginx's error log (for failure messages).
func (s *site) errorLog() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "error.log"))
	if len(b) > 400 {
		b = b[len(b)-400:]
	}
	return string(bytes.TrimSpace(b))
}

func (s *site) remove() error {
	if err := os.RemoveAll(s.Dir); err != nil {
		return fmt.Errorf("remove %s: %w", s.Dir, err)
	}
	return nil
}

// Serve runs nginx (program bin) on listen, serving a body of size
// bytes, until ctx ends; then it stops nginx with SIGTERM (its fast
// shutdown) and removes the site. nginx's output and, when it exits, the
// tail of its error log go to logw. It is what `cnibench agent nginx`
// runs in a kube server pod, under the exec shim that ends it (SIGTERM)
// when the trial stops the server. A nginx that exits by itself is an
// error: nothing serves the pair any more.
func Serve(ctx context.Context, bin, listen string, size int64, logw io.Writer) error {
	s, err := newSite(listen, size, "")
	if err != nil {
		return fmt.Errorf("nginx site: %w", err)
	}
	defer s.remove()
	argv := s.argv(bin)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logw, logw
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start nginx: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
		if err == nil {
			err = errors.New("exited")
		}
		err = fmt.Errorf("nginx: %w", err)
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	if log := s.errorLog(); log != "" {
		fmt.Fprintf(logw, "nginx error log: %s\n", log)
	}
	return err
}
