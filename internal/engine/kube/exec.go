package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// Execer runs a command in a pod's container through the API and
// streams its stdio. A non-zero exit is an *ExitCodeError.
type Execer interface {
	Exec(ctx context.Context, namespace, pod, container string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// ExitCodeError is a remote command's non-zero exit.
type ExitCodeError struct{ Code int }

func (e *ExitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// APIExecer execs through pods/exec: WebSocket first, SPDY as fallback.
type APIExecer struct {
	Config *rest.Config
	Client kubernetes.Interface
}

// Exec implements Execer.
func (e *APIExecer) Exec(ctx context.Context, namespace, pod, container string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	req := e.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: container, Command: argv,
			Stdin: stdin != nil, Stdout: stdout != nil, Stderr: stderr != nil,
		}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(e.Config, http.MethodGet, req.URL().String())
	if err != nil {
		return err
	}
	spdy, err := remotecommand.NewSPDYExecutor(e.Config, http.MethodPost, req.URL())
	if err != nil {
		return err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	var ce utilexec.CodeExitError
	if errors.As(err, &ce) {
		return &ExitCodeError{Code: ce.Code}
	}
	if err != nil {
		return fmt.Errorf("exec in pod %s/%s: %w", namespace, pod, err)
	}
	return nil
}
