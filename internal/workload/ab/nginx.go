package ab

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"text/template"
)

// nginx serves the body from a private prefix directory: its own config,
// pid, error log and temp paths, so nothing of the host's nginx (config,
// logs, service) is read or touched. The files live on this machine's
// filesystem, which the local engine's pods share.
var confTmpl = template.Must(template.New("nginx.conf").Parse(`# written by cnibench for one HTTP trial
daemon off;
worker_processes 1;
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/error.log warn;
events { worker_connections 16384; }
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
}

// newSite writes the config and a body of size bytes under a new
// temporary directory. Directories are world-readable because nginx's
// workers drop root for nobody.
func newSite(ip string, port int, size int64) (*site, error) {
	dir, err := os.MkdirTemp("", "cnb-http-")
	if err != nil {
		return nil, err
	}
	s := &site{Dir: dir, Addr: ip + ":" + strconv.Itoa(port)}
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
	if err := writeBody(filepath.Join(www, "body"), size); err != nil {
		return fail(err)
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
