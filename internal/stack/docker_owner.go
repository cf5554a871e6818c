package stack

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// dockerLabelOwner names the perfgate that started a container, so that a
// later run can tell a container left behind by a perfgate that is gone
// (killed with SIGKILL, its runner rebooted under it) from one of a perfgate
// that still runs (another job on the same runner). Its value is one of:
//
//	container/<id>                               perfgate runs in container <id>, on the same engine
//	process/<boot id>/<pid ns>/<pid>/<start>     perfgate is process <pid>, started at <start> (clock
//	                                             ticks since boot), in PID namespace <pid ns>, on the
//	                                             machine whose current boot is <boot id>
const dockerLabelOwner = "io.perfgate.owner"

// dockerOwner is the owner label of this perfgate: its own container, when
// it runs in one that this engine knows, else this process; "" when neither
// can be told (no /proc), and then containers are left for a person to
// remove.
func dockerOwner(ctx context.Context, cli *client.Client) string {
	if id, err := ownContainerID(); err == nil {
		info, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if err == nil && info.Container.State != nil && info.Container.State.Running {
			return "container/" + info.Container.ID
		}
	}
	owner, _ := processOwner(os.Getpid())
	return owner
}

// processOwner is the owner label of process pid on this machine.
func processOwner(pid int) (string, bool) {
	st, ok := readProcStat(pid)
	boot, ns := bootID(), pidNamespace(pid)
	if !ok || boot == "" || ns == "" {
		return "", false
	}
	return fmt.Sprintf("process/%s/%s/%d/%d", boot, ns, pid, st.start), true
}

// bootID names this machine's current boot; "" when it cannot be read.
func bootID() string {
	b, err := os.ReadFile(procRoot + "/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pidNamespace names pid's PID namespace by its inode ("4026531836"); ""
// when it cannot be read.
func pidNamespace(pid int) string {
	link, err := os.Readlink(fmt.Sprintf("%s/%d/ns/pid", procRoot, pid))
	if err != nil {
		return ""
	}
	ino := strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]")
	if _, err := strconv.ParseUint(ino, 10, 64); err != nil {
		return ""
	}
	return ino
}

// ownerGone says whether the perfgate that owner names is gone, and why.
// known is false when this perfgate cannot tell: an owner on another machine
// or in another PID namespace (its pid means nothing here), an owner label
// it cannot read, an engine that does not answer. Such a container is left
// alone: removing a live run's stack would break it.
func ownerGone(ctx context.Context, cli *client.Client, owner string) (gone bool, why string, known bool) {
	kind, rest, _ := strings.Cut(owner, "/")
	switch kind {
	case "container":
		info, err := cli.ContainerInspect(ctx, rest, client.ContainerInspectOptions{})
		switch {
		case cerrdefs.IsNotFound(err):
			return true, fmt.Sprintf("its container %s is no longer on this Docker engine", shortID(rest)), true
		case err != nil || info.Container.State == nil:
			return false, "", false
		case !info.Container.State.Running:
			return true, fmt.Sprintf("its container %s has stopped", shortID(rest)), true
		}
		return false, "", true
	case "process":
		f := strings.Split(rest, "/")
		if len(f) != 4 {
			return false, "", false
		}
		pid, err1 := strconv.Atoi(f[2])
		start, err2 := strconv.ParseUint(f[3], 10, 64)
		if err1 != nil || err2 != nil || pid <= 0 {
			return false, "", false
		}
		if f[0] != bootID() || f[1] != pidNamespace(os.Getpid()) {
			return false, "", false // another machine, boot or PID namespace: its pid means nothing here
		}
		st, ok := readProcStat(pid)
		switch {
		case !ok:
			return true, fmt.Sprintf("its process %d is no longer running on this host", pid), true
		case st.start != start:
			return true, fmt.Sprintf("its process %d has ended (the pid now names another process)", pid), true
		case st.state == 'Z':
			return true, fmt.Sprintf("its process %d has ended", pid), true
		}
		return false, "", true
	}
	return false, "", false
}

// shortID is a container ID as docker ps shows it.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// removeOrphans removes the containers perfgate started whose owner is gone,
// saying so through o.Notice for each; containers of a live owner, of an
// owner this perfgate cannot check, or with no owner label (an older
// perfgate) are left alone. A failure is a notice, not an error: the start
// goes on, and the port check catches a leftover that still holds the port.
func removeOrphans(ctx context.Context, cli *client.Client, self string, o Options) {
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", dockerLabelManaged+"=true"),
	})
	if err != nil {
		o.notice("warning: docker: cannot list the containers of earlier perfgate runs: %v", err)
		return
	}
	for _, c := range list.Items {
		owner := c.Labels[dockerLabelOwner]
		if c.Labels[dockerLabelManaged] != "true" || owner == "" || owner == self {
			continue
		}
		gone, why, known := ownerGone(ctx, cli, owner)
		if !known || !gone {
			continue
		}
		name := shortID(c.ID)
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
			o.notice("warning: docker: cannot remove container %s, left behind by a perfgate that is gone (%s): %v; remove it with docker rm -f %s", name, why, err, name)
			continue
		}
		o.notice("docker: removed container %s (%s), left behind by a perfgate that is gone: %s", name, c.State, why)
	}
}
