package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// privPrefix starts the name of a run's private directory. The directory
// holds the sim device (tens of MB); a coordinator killed outright cannot
// remove it, so its name carries the coordinator's pid, and the next run
// in the same temporary directory removes the ones whose coordinator is
// gone: xrcbench-run-<pid>-<random>.
const privPrefix = "xrcbench-run-"

// makePrivDir creates this run's private directory in parent ("" is the
// system's temporary directory), after removing those left by dead runs.
func makePrivDir(parent string) (string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	removeDeadPrivDirs(parent)
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%s%d-", privPrefix, os.Getpid()))
	if err != nil {
		return "", err
	}
	// Private: the device and domain files are nobody else's business.
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// removeDeadPrivDirs removes the private directories in parent whose
// coordinator is no longer running. Best effort: a directory that cannot
// be removed (another user's) stays, and the run goes on.
func removeDeadPrivDirs(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, ok := privDirPID(e.Name())
		if !ok || !e.IsDir() || pid == os.Getpid() || coordinatorAlive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(parent, e.Name()))
	}
}

// privDirPID is the pid in a private directory's name. Names without one
// (older versions) are not ours to judge.
func privDirPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, privPrefix)
	if !ok {
		return 0, false
	}
	p, suffix, ok := strings.Cut(rest, "-")
	if !ok || suffix == "" {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}

// coordinatorAlive says whether pid may still be the run that made the
// directory. Pids are reused, so a live pid counts only if it is an
// xrcbench process: this very binary (the same file), or one named
// xrcbench. When that cannot be told (another user's process), it is
// assumed alive: a directory wrongly kept costs disk, one wrongly removed
// breaks a running benchmark.
func coordinatorAlive(pid int) bool {
	proc := fmt.Sprintf("/proc/%d", pid)
	if _, err := os.Stat(proc); err != nil {
		return !os.IsNotExist(err)
	}
	exe, err := os.Readlink(proc + "/exe")
	if err != nil {
		// Gone in between, a zombie (no exe), or not ours to read.
		if _, serr := os.Stat(proc); os.IsNotExist(serr) {
			return false
		}
		return !isZombie(pid)
	}
	if strings.Contains(filepath.Base(strings.TrimSuffix(exe, " (deleted)")), "xrcbench") {
		return true
	}
	theirs, err1 := os.Stat(proc + "/exe")
	ours, err2 := os.Stat("/proc/self/exe")
	return err1 == nil && err2 == nil && os.SameFile(theirs, ours)
}

// isZombie says whether pid has exited and only waits to be reaped: it
// runs nothing any more, whatever it was.
func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
