package stack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
)

// deadPid returns the pid of a process that has ended and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", "exit 0")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// notices collects what a start says through Options.Notice.
type notices struct {
	mu    sync.Mutex
	lines []string
}

func (n *notices) add(msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, msg)
}

func (n *notices) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.lines...)
}

// A docker stack's start removes the containers perfgate started whose
// perfgate is gone, and says so; it leaves those of a perfgate that still
// runs, or that it cannot check, or that carry no owner. (Before, nothing
// was removed: a container left by a killed perfgate held its GPU and port
// until someone noticed.)
func TestDockerRemovesLeftoversOfAGonePerfgate(t *testing.T) {
	pinOwnContainer(t, "", "mountinfo-host", "cgroup-v2") // perfgate is a process on the host
	self, ok := processOwner(os.Getpid())
	require.True(t, ok, "this test needs /proc")
	parent, ok := processOwner(os.Getppid())
	require.True(t, ok)
	f := strings.Split(self, "/") // process/<boot>/<ns>/<pid>/<start>
	boot, ns, start := f[1], f[2], f[4]
	dead := deadPid(t)

	const ownerCtr = "0wner0000000000000000000000000000000000000000000000000000000000a"
	const stoppedCtr = "0wner0000000000000000000000000000000000000000000000000000000000b"
	const goneCtr = "0wner0000000000000000000000000000000000000000000000000000000000c"
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	e.addOther(ownerCtr, "perfgate-action-job-1", "running", map[string]string{})
	e.addOther(stoppedCtr, "perfgate-action-job-2", "exited", map[string]string{})
	managed := func(owner string) map[string]string {
		l := map[string]string{dockerLabelManaged: "true", dockerLabelRun: "old"}
		if owner != "" {
			l[dockerLabelOwner] = owner
		}
		return l
	}
	leftovers := []struct {
		name, state, owner string
		removed            bool
		why                string
	}{
		{"perfgate-dead-pid", "running", fmt.Sprintf("process/%s/%s/%d/%s", boot, ns, dead, start), true,
			fmt.Sprintf("its process %d is no longer running on this host", dead)},
		{"perfgate-reused-pid", "running", fmt.Sprintf("process/%s/%s/%d/1", boot, ns, os.Getpid()), true,
			fmt.Sprintf("its process %d has ended (the pid now names another process)", os.Getpid())},
		{"perfgate-stopped-one", "exited", fmt.Sprintf("process/%s/%s/%d/%s", boot, ns, dead, start), true,
			fmt.Sprintf("its process %d is no longer running on this host", dead)},
		{"perfgate-owner-container-gone", "running", "container/" + goneCtr, true,
			"its container 0wner0000000 is no longer on this Docker engine"},
		{"perfgate-owner-container-stopped", "running", "container/" + stoppedCtr, true,
			"its container 0wner0000000 has stopped"},
		{"perfgate-live-process", "running", parent, false, ""},
		{"perfgate-this-very-run", "running", self, false, ""},
		{"perfgate-live-container", "running", "container/" + ownerCtr, false, ""},
		{"perfgate-other-machine", "running", fmt.Sprintf("process/%s/%s/%d/%s", "another-boot", ns, dead, start), false, ""},
		{"perfgate-other-pid-namespace", "running", fmt.Sprintf("process/%s/%s/%d/%s", boot, "1", dead, start), false, ""},
		{"perfgate-older-version", "running", "", false, ""},
		{"perfgate-unreadable-owner", "running", "process/what", false, ""},
	}
	for i, l := range leftovers {
		e.addOther(fmt.Sprintf("1eft%060d", i), l.name, l.state, managed(l.owner))
	}
	e.addOther("n0tperfgate", "someone-elses", "running", map[string]string{dockerLabelOwner: "container/" + goneCtr})

	var said notices
	o := dockerOptions(t)
	o.Notice = said.add
	startDockerFake(t, e, config.DockerStack{Image: dockerTestImage}, o)

	var wantRemoved, wantSaid []string
	for _, l := range leftovers {
		if l.removed {
			wantRemoved = append(wantRemoved, l.name)
			wantSaid = append(wantSaid, fmt.Sprintf("docker: removed container %s (%s), left behind by a perfgate that is gone: %s", l.name, l.state, l.why))
		}
	}
	e.mu.Lock()
	removed := append([]string(nil), e.removedOthers...)
	e.mu.Unlock()
	assert.ElementsMatch(t, wantRemoved, removed, "the containers removed")
	assert.ElementsMatch(t, wantSaid, said.all(), "what the start said")

	req, _ := e.createRequest(t)
	assert.Equal(t, self, req.Config.Labels[dockerLabelOwner], "the new container carries this perfgate as its owner")
	seq := withoutDockerWait(e.sequence())
	assert.Equal(t, "POST /containers/create", seq[len(wantRemoved)], "leftovers go before the new container is created: %v", seq)
}

// perfgate in a container the engine knows owns its containers as that
// container, not as a pid of its own namespace.
func TestDockerOwnerIsPerfgatesContainer(t *testing.T) {
	pinOwnContainer(t, fakeOwnID, "mountinfo-host", "cgroup-v2")
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	e.addOther(fakeOwnID, "perfgate-action", "running", map[string]string{})
	startDockerFake(t, e, config.DockerStack{Image: dockerTestImage}, dockerOptions(t))
	req, _ := e.createRequest(t)
	assert.Equal(t, "container/"+fakeOwnID, req.Config.Labels[dockerLabelOwner])
}

// An engine that will not list containers does not stop the start: the
// cleanup is best effort, and says that it could not be done.
func TestDockerCleanupFailsSoftly(t *testing.T) {
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	e.listStatus = http.StatusInternalServerError
	var said notices
	o := dockerOptions(t)
	o.Notice = said.add
	startDockerFake(t, e, config.DockerStack{Image: dockerTestImage}, o)
	require.Len(t, said.all(), 1)
	assert.Contains(t, said.all()[0], "warning: docker: cannot list the containers of earlier perfgate runs: ")
	assert.Len(t, e.calls(http.MethodPost, "/containers/create"), 1)
}

// The check is cheap: one list and a look at /proc per leftover. Its cost
// with 20 leftovers of dead perfgates, each removed, is logged.
func TestDockerCleanupCost(t *testing.T) {
	pinOwnContainer(t, "", "mountinfo-host", "cgroup-v2")
	self, ok := processOwner(os.Getpid())
	require.True(t, ok)
	f := strings.Split(self, "/")
	dead := deadPid(t)
	e := newFakeDockerEngine(t)
	for i := range 20 {
		e.addOther(fmt.Sprintf("c0st%060d", i), fmt.Sprintf("perfgate-old-%d", i), "running", map[string]string{
			dockerLabelManaged: "true", dockerLabelOwner: fmt.Sprintf("process/%s/%s/%d/%s", f[1], f[2], dead, f[4]),
		})
	}
	cli, err := newDockerClient(e.host)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cli.Close() })
	require.NoError(t, dockerPing(context.Background(), cli))
	var said notices
	begin := time.Now()
	removeOrphans(context.Background(), cli, self, Options{Notice: said.add})
	took := time.Since(begin)
	assert.Len(t, said.all(), 20)
	begin = time.Now()
	removeOrphans(context.Background(), cli, self, Options{Notice: said.add})
	t.Logf("orphan check: %s with 20 leftovers removed, %s with none left", took, time.Since(begin))
	assert.Len(t, said.all(), 20, "the second check found nothing more to remove")
}

func TestParseProcStat(t *testing.T) {
	line := "4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n"
	st, ok := parseProcStat(4242, []byte(line))
	require.True(t, ok)
	assert.Equal(t, procStat{pid: 4242, comm: "my (odd) proc", state: 'S', ppid: 1, pgrp: 4242, start: 987654}, st)
	for _, bad := range []string{"", "4242 (x", "4242 (x) S 1", "4242 (x) S a b c d e f g h i j k l m n o p q r s t"} {
		_, ok := parseProcStat(1, []byte(bad))
		assert.False(t, ok, "parseProcStat(%q)", bad)
	}
}
