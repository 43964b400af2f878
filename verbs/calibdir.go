package verbs

import (
	"os"

	"github.com/xrcbench/xrcbench/internal/safedir"
)

// calibPrefix starts the name of calibrate's scratch folder, which holds
// sim devices of 35-52 MB. A calibrate killed outright (SIGKILL, or a
// signal before it could clean up) cannot remove it, so the next one
// removes those whose owner is provably gone: it is a safedir scratch
// folder, whose lock its owner holds for its whole life.
const calibPrefix = "xrcbench-calibrate-"

// CalibrationDir makes a private scratch folder for calibrate.Run in the
// temporary folder, after removing those left by dead calibrations, and
// returns it with the function that removes it.
func CalibrationDir() (dir string, remove func(), err error) {
	parent := os.TempDir()
	removeDeadCalibrationDirs(parent)
	dir, lock, err := safedir.MakeScratch(parent, calibPrefix, nil)
	if err != nil {
		return "", nil, err
	}
	return dir, func() { safedir.RemoveScratch(dir); lock.Close() }, nil
}

// removeDeadCalibrationDirs removes the scratch folders in parent whose
// calibration is gone (safedir.RemoveDeadScratch).
func removeDeadCalibrationDirs(parent string) { safedir.RemoveDeadScratch(parent, calibPrefix) }
