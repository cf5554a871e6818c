package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// portForward forwards local loopback port local (0: a free one) to port
// of pod, as kubectl port-forward does, over the API server's connection.
func portForward(ctx context.Context, c *Clients, namespace, pod string, port, local int) (string, func(), error) {
	if c.REST == nil {
		return "", nil, errors.New("no API server connection to forward over")
	}
	transport, upgrader, err := spdy.RoundTripperFor(c.REST)
	if err != nil {
		return "", nil, err
	}
	url := c.Core.RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("%d:%d", local, port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return "", nil, err
	}
	var once sync.Once
	end := func() { once.Do(func() { close(stop) }) }
	failed := make(chan error, 1)
	go func() { failed <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-failed:
		return "", nil, err
	case <-ctx.Done():
		end()
		return "", nil, context.Cause(ctx)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		end()
		return "", nil, fmt.Errorf("no local port: %v", err)
	}
	return fmt.Sprintf("127.0.0.1:%d", ports[0].Local), end, nil
}
