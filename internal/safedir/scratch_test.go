package safedir

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// A scratch folder goes even while its work still fills it: a stop signal
// removes calibrate's folder, or a run's private directory, with sim
// devices and domains still appearing in it. Removing in place lost to a
// file made between emptying the folder and removing it; calibrate left
// its folder so in CI. The makers are a sim device's two ways in: a
// folder and files by path (os.Mkdir in cgo_sim.go), and a file made
// through a descriptor of the folder opened before (sim.c's openat).
func TestRemoveScratchWhileFilled(t *testing.T) {
	makers := []struct {
		name string
		make func(dir string, n int) error
	}{
		{"by path", func(dir string, n int) error {
			sub := filepath.Join(dir, "sim-"+strconv.Itoa(n))
			if err := os.Mkdir(sub, 0o700); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(sub, "dev"), nil, 0o600)
		}},
		{"through a descriptor", func(dir string, n int) error {
			dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(dfd)
			fd, err := unix.Openat(dfd, "dev-"+strconv.Itoa(n), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
	}
	for _, m := range makers {
		t.Run(m.name, func(t *testing.T) {
			parent := t.TempDir()
			for try := 0; try < 200; try++ {
				dir, lock, err := MakeScratch(parent, "scratch-", nil)
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				stop := make(chan struct{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						if m.make(dir, n) != nil {
							return // the folder is gone
						}
					}
				}()
				err = RemoveScratch(dir)
				close(stop)
				wg.Wait()
				lock.Close()
				left, _ := filepath.Glob(filepath.Join(parent, "scratch-*"))
				if err != nil || len(left) > 0 {
					t.Fatalf("try %d: %v; left behind: %q", try, err, left)
				}
			}
		})
	}
}
