package bench

import (
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// No thread leaves a barrier before every thread has arrived, and the
// serial action's effect is seen by all: each thread checks, after each
// barrier, that every thread has finished the previous step.
func TestBarrier(t *testing.T) {
	for _, parties := range []int{1, 2, 5, 16} {
		sh, err := createShm(filepath.Join(t.TempDir(), "b"), parties, 4)
		if err != nil {
			t.Fatal(err)
		}
		const steps = 200
		var arrived [steps]atomic.Int32
		var serial [steps]atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, parties)
		for p := 0; p < parties; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := 0; s < steps; s++ {
					arrived[s].Add(1)
					if err := sh.wait(func() { serial[s].Add(1); sh.setQPN(s%4, uint32(s)) }); err != nil {
						errs <- err
						return
					}
					if n := arrived[s].Load(); n != int32(parties) {
						errs <- errors.New("left a barrier before all arrived")
						return
					}
					if sh.qpn(s%4) != uint32(s) {
						errs <- errors.New("serial action not visible after the barrier")
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("%d parties: %v", parties, err)
		}
		for s := range serial {
			if serial[s].Load() != 1 {
				t.Fatalf("%d parties: step %d ran the serial action %d times", parties, s, serial[s].Load())
			}
		}
		sh.close()
	}
}

// An abort releases threads asleep in a barrier at once.
func TestBarrierAbort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b")
	sh, err := createShm(path, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.close()
	other, err := openShm(path) // as another process would map it
	if err != nil {
		t.Fatal(err)
	}
	defer other.close()
	done := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() { done <- sh.wait(nil) }()
	}
	time.Sleep(50 * time.Millisecond) // long enough to be asleep in futex_wait
	other.abort()
	for i := 0; i < 2; i++ {
		select {
		case err := <-done:
			if !errors.Is(err, ErrAborted) {
				t.Errorf("wait = %v, want ErrAborted", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("abort did not release a waiter")
		}
	}
	if err := sh.wait(nil); !errors.Is(err, ErrAborted) {
		t.Errorf("wait after abort = %v, want ErrAborted", err)
	}
}

func TestOpenShmRejects(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string][]byte{"short": []byte("x"), "foreign": make([]byte, shmHeader)} {
		path := filepath.Join(dir, name)
		if err := writeFile(path, content); err != nil {
			t.Fatal(err)
		}
		if s, err := openShm(path); err == nil {
			s.close()
			t.Errorf("%s: openShm accepted it", name)
		}
	}
}
