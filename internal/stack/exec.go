package stack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/perfgate/perfgate/internal/safeio"
)

// Execer is a stack that can run a command inside itself (a docker stack):
// perfgate runs nvidia-smi there when it has none of its own.
type Execer interface {
	// Exec runs argv in the stack and returns its standard output; a
	// command that fails is an error with the first line of what it said.
	Exec(ctx context.Context, argv []string) ([]byte, error)
	// ExecWhere names where Exec runs, for messages: "container
	// perfgate-1a2b".
	ExecWhere() string
}

var _ Execer = (*dockerInstance)(nil)

// The engine records an exec's exit code as its output stream ends, and may
// still report it running for a moment after: inspect is retried this often,
// at most this many times.
const (
	// execOutputLimit bounds what Exec keeps of each stream: nvidia-smi's
	// answer is a few hundred bytes; a command that writes more is not the
	// one perfgate meant to run.
	execOutputLimit = 4 << 20

	execInspectInterval = 20 * time.Millisecond
	execInspectTries    = 50
)

// Exec runs argv in the container through the Engine API, as docker exec
// does: it creates the exec with standard output and error attached, reads
// the two streams apart, and then asks the engine for the exit code. A
// non-zero exit is an error with the first line of standard error (or, if
// that is empty, of standard output). The error does not repeat argv: the
// caller names the command. Cancelling ctx ends the wait and closes the
// stream; the command itself may run on in the container.
func (i *dockerInstance) Exec(ctx context.Context, argv []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("docker exec: no command to run")
	}
	created, err := i.cli.ExecCreate(ctx, i.id, client.ExecCreateOptions{
		Cmd:          argv,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return nil, fmt.Errorf("docker exec: create: %w", err)
	}
	att, err := i.cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("docker exec: start: %w", err)
	}
	defer att.Close()
	// The attached stream is a hijacked connection, not tied to ctx.
	stop := context.AfterFunc(ctx, att.Close)
	defer stop()

	stdout := &safeio.Buffer{Limit: execOutputLimit, What: "the command's standard output"}
	stderr := &safeio.Buffer{Limit: execOutputLimit, What: "the command's standard error"}
	_, streamErr := stdcopy.StdCopy(stdout, stderr, att.Reader)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("docker exec: %w", ctx.Err())
	}

	code, err := i.execExitCode(ctx, created.ID)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		msg := firstLineOf(stderr.String())
		if msg == "" {
			msg = firstLineOf(stdout.String())
		}
		if msg == "" {
			return nil, fmt.Errorf("exited with code %d", code)
		}
		return nil, fmt.Errorf("exited with code %d: %s", code, msg)
	}
	if streamErr != nil {
		return nil, fmt.Errorf("docker exec: read the output: %w", streamErr)
	}
	return stdout.Bytes(), nil
}

// execExitCode waits for the engine to record that exec id has ended, and
// returns its exit code.
func (i *dockerInstance) execExitCode(ctx context.Context, id string) (int, error) {
	for try := 1; ; try++ {
		info, err := i.cli.ExecInspect(ctx, id, client.ExecInspectOptions{})
		if err != nil {
			return 0, fmt.Errorf("docker exec: inspect: %w", err)
		}
		if !info.Running {
			return info.ExitCode, nil
		}
		if try == execInspectTries {
			return 0, fmt.Errorf("docker exec: the command's output ended but the engine still reports it running after %s",
				execInspectInterval*execInspectTries)
		}
		t := time.NewTimer(execInspectInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, fmt.Errorf("docker exec: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// ExecWhere is "container <name>".
func (i *dockerInstance) ExecWhere() string { return "container " + i.name }

// firstLineOf is the first non-blank line of s, trimmed and cut to 200 bytes.
func firstLineOf(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				line = line[:200] + "..."
			}
			return line
		}
	}
	return ""
}
