package helm

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// maxLogBytes bounds what is read from one container; the check run cuts
// far below this anyway.
const maxLogBytes = 1 << 20

// PodLogs finds the pods a test hook ran and reads their logs.
type PodLogs interface {
	// Pods names the pods of a hook object: the object itself for a Pod, the
	// pods labelled job-name=NAME for a Job, none for other kinds.
	Pods(ctx context.Context, namespace, kind, name string) ([]string, error)
	// Logs returns the logs of every container of the pod.
	Logs(ctx context.Context, namespace, pod string) (string, error)
}

// KubePodLogs reads pods and logs through client-go.
type KubePodLogs struct {
	Client kubernetes.Interface
}

var _ PodLogs = KubePodLogs{}

func (k KubePodLogs) Pods(ctx context.Context, namespace, kind, name string) ([]string, error) {
	switch kind {
	case "Pod":
		return []string{name}, nil
	case "Job":
		list, err := k.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + name})
		if err != nil {
			return nil, fmt.Errorf("listing pods of job %s: %w", name, err)
		}
		pods := make([]string, 0, len(list.Items))
		for _, p := range list.Items {
			pods = append(pods, p.Name)
		}
		return pods, nil
	}
	return nil, nil
}

// Logs reads each container's logs (init containers first), headed by the
// container name when there is more than one.
func (k KubePodLogs) Logs(ctx context.Context, namespace, pod string) (string, error) {
	p, err := k.Client.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("pod %s/%s is gone", namespace, pod)
	}
	if err != nil {
		return "", fmt.Errorf("getting pod %s/%s: %w", namespace, pod, err)
	}
	var containers []string
	for _, c := range p.Spec.InitContainers {
		containers = append(containers, c.Name)
	}
	for _, c := range p.Spec.Containers {
		containers = append(containers, c.Name)
	}
	if len(containers) <= 1 {
		container := ""
		if len(containers) == 1 {
			container = containers[0]
		}
		return k.containerLogs(ctx, namespace, pod, container)
	}
	var b strings.Builder
	for _, c := range containers {
		text, err := k.containerLogs(ctx, namespace, pod, c)
		if err != nil {
			text = "(" + err.Error() + ")\n"
		}
		fmt.Fprintf(&b, "==> container %s <==\n%s", c, text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}

func (k KubePodLogs) containerLogs(ctx context.Context, namespace, pod, container string) (string, error) {
	limit := int64(maxLogBytes)
	req := k.Client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, LimitBytes: &limit})
	stream, err := req.Stream(ctx)
	if err != nil {
		return "", fmt.Errorf("reading logs of %s/%s: %w", namespace, pod, err)
	}
	defer stream.Close()
	b, err := io.ReadAll(io.LimitReader(stream, maxLogBytes))
	if err != nil {
		return string(b), fmt.Errorf("reading logs of %s/%s: %w", namespace, pod, err)
	}
	return string(b), nil
}
