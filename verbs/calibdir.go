package verbs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// calibPrefix starts the name of calibrate's scratch folder, which holds
// sim devices of 35-52 MB. A calibrate killed outright (SIGKILL, or a
// signal before it could clean up) cannot remove it, so the next one
// removes those whose owner is provably gone: each holds an flock on
// calibLock inside for its whole life, which the kernel drops when the
// process dies, however it dies (a pid would say nothing across PID
// namespaces sharing /tmp, or once reused).
const (
	calibPrefix = "xrcbench-calibrate-"
	calibLock   = "lock"
)

// CalibrationDir makes a private scratch folder for Calibrate in the
// temporary folder, after removing those left by dead calibrations, and
// returns it with the function that removes it.
func CalibrationDir() (dir string, remove func(), err error) {
	parent := os.TempDir()
	removeDeadCalibrationDirs(parent)
	if dir, err = os.MkdirTemp(parent, calibPrefix); err != nil {
		return "", nil, err
	}
	// Locked under another name, then renamed into place: a cleaner
	// finds no lock file (and leaves the folder) or a held one.
	f, err := os.OpenFile(filepath.Join(dir, calibLock+".new"), os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err == nil {
		if err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
			err = os.Rename(filepath.Join(dir, calibLock+".new"), filepath.Join(dir, calibLock))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir); f.Close() }, nil
}

// removeDeadCalibrationDirs removes the scratch folders in parent whose
// calibration is gone: this user's folders (not links) whose lock file
// no one holds. A folder without a lock file is being made, or was left
// by a version without one: it is left alone.
func removeDeadCalibrationDirs(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), calibPrefix) || !e.IsDir() {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() || st.Sys().(*syscall.Stat_t).Uid != uint32(os.Getuid()) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, calibLock), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			os.RemoveAll(dir)
		}
		f.Close()
	}
}
