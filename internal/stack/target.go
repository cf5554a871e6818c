package stack

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"
)

// targetDialTimeout bounds the check that nothing answers at the target yet:
// an address that drops packets is as good as free. It is generous because a
// connection on this machine, which answers at once, must not be taken for
// one that never answers on a machine too busy to run perfgate promptly.
const targetDialTimeout = 10 * time.Second

// TargetInUseError says something already answers at the target before
// perfgate starts the stack that should answer there: a server left over
// from an earlier run, or another program. perfgate would measure it instead
// of the stack it starts, so it refuses to start.
type TargetInUseError struct {
	// Target is the target's base URL; Addr is the host:port that answered.
	Target, Addr string
	// Port is the port, for the hint.
	Port string
}

func (e *TargetInUseError) Error() string {
	return fmt.Sprintf("something already answers at %s, the address of target.base_url %s, before perfgate has started the stack: "+
		"a server left over from an earlier run, or another program, holds it, and perfgate would measure it instead of the stack it starts; "+
		"find it with `ss -ltnp 'sport = :%s'` (or `docker ps` for a container that publishes the port), stop it, and run again",
		e.Addr, e.Target, e.Port)
}

// checkTargetFree refuses when a TCP connection to target's host and port
// succeeds. An empty target, or one that cannot be reached (a name that does
// not resolve yet, a refused connection), is free.
func checkTargetFree(ctx context.Context, target string) error {
	if target == "" {
		return nil
	}
	u, err := url.Parse(target)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("stack: target.base_url %q has no host to check", target)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	dctx, cancel := context.WithTimeout(ctx, targetDialTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("stack: check that nothing answers at %s yet: %w", addr, context.Cause(ctx))
		}
		return nil
	}
	_ = conn.Close()
	return &TargetInUseError{Target: target, Addr: addr, Port: port}
}
