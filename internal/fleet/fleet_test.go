package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"n1", []string{"n1"}, ""},
		{"n[1-3]", []string{"n1", "n2", "n3"}, ""},
		{"n[08-10],gpu1", []string{"n08", "n09", "n10", "gpu1"}, ""},
		{"rack[1,3-4]-a,x", []string{"rack1-a", "rack3-a", "rack4-a", "x"}, ""},
		{"", nil, ""},
		{"n[3-1]", nil, ""},
		{"n[a-b]", nil, ""},
		{"n[1-2", nil, ""},
		// A few bytes that stand for more nodes than a fleet may have:
		// refused before they are expanded, not after gigabytes of names.
		{"n[0-9999999999]", nil, "more than 65536 nodes"},
		{"n[1-100000" + strings.Repeat(",1-100000", 299) + "]", nil, "more than 65536 nodes"},
		{"n[1-40000],m[1-40000]", nil, "more than 65536 nodes"},
		{"n[" + strings.Repeat("0", 100000) + "1-2]", nil, "cannot name a folder"},
		{"../etc", nil, "cannot name a folder"},
	}
	for _, tt := range tests {
		got, err := expandHostlist(tt.in)
		if tt.wantErr != "" {
			if err == nil || !errors.Is(err, errFleet) || !strings.Contains(err.Error(), tt.wantErr) || len(err.Error()) > 300 {
				t.Errorf("expandHostlist(%.40q): %d names, err %.300v, want a short errFleet saying %q", tt.in, len(got), err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("expandHostlist(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
	// The largest list a fleet may have is still read.
	if got, err := expandHostlist("n[1-65536]"); err != nil || len(got) != results.MaxFleetNodes {
		t.Errorf("n[1-65536]: %d names, %v", len(got), err)
	}
}

func TestFleetIdentity(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    *results.Fleet
		wantErr string
	}{
		{"slurm", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "2", "SLURM_NNODES": "3", "SLURMD_NODENAME": "c3", "SLURM_LOCALID": "0"},
			&results.Fleet{Launcher: "slurm", JobID: "77", Node: "c3", Rank: 2, Nodes: 3}, ""},
		{"slurm, a step of a batch job", map[string]string{"SLURM_JOB_ID": "77", "SLURM_STEP_ID": "1", "SLURM_PROCID": "2", "SLURM_NNODES": "3", "SLURMD_NODENAME": "c3", "SLURM_LOCALID": "0"},
			&results.Fleet{Launcher: "slurm", JobID: "77", StepID: "1", Node: "c3", Rank: 2, Nodes: 3}, ""},
		{"slurm, node from hostname", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURM_JOB_NUM_NODES": "2"},
			&results.Fleet{Launcher: "slurm", JobID: "77", Node: "host", Rank: 0, Nodes: 2}, ""},
		{"openmpi", map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "1", "PMIX_NAMESPACE": "prterun-x-1@1"},
			&results.Fleet{Launcher: "openmpi", JobID: "prterun-x-1@1", Node: "host", Rank: 1, Nodes: 4}, ""},
		{"pmix", map[string]string{"PMIX_RANK": "5"}, &results.Fleet{Launcher: "pmix", Node: "host", Rank: 5}, ""},
		{"no launcher", map[string]string{"SLURM_JOB_ID": "77"}, nil, "no launcher found"},
		{"second task", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "1", "SLURM_NNODES": "1", "SLURM_LOCALID": "1"}, nil, "second task on node host"},
		{"second open mpi task", map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}, nil, "second task"},
		{"more tasks than nodes", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "3", "SLURM_NNODES": "2"}, nil, "more tasks than nodes"},
		{"bad rank", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "x"}, nil, `SLURM_PROCID="x"`},
		{"node name a path", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURMD_NODENAME": "../etc"}, nil, "cannot name a folder"},
		{"slurm node list", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURM_NNODES": "2", "SLURM_JOB_NODELIST": "c[1-2]"},
			&results.Fleet{Launcher: "slurm", JobID: "77", Node: "host", Rank: 0, Nodes: 2, NodeList: []string{"c1", "c2"}}, ""},
		{"huge SLURM_NNODES", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURM_NNODES": "2000000000"}, nil, "SLURM_NNODES=2000000000: more than the 65536 nodes"},
		{"huge SLURM_JOB_NUM_NODES", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURM_JOB_NUM_NODES": "65537"}, nil, "more than the 65536 nodes"},
		{"huge node list", map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURM_NNODES": "2", "SLURM_JOB_NODELIST": "n[0-99999]"}, nil, "SLURM_JOB_NODELIST names more than 65536 nodes"},
		{"huge open mpi world", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2000000000", "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "1"}, nil, "OMPI_COMM_WORLD_SIZE=2000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Identity(func(k string) string { return tt.env[k] }, "host")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, errFleet) {
					t.Fatalf("err %v, want errFleet containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", *got, *tt.want)
			}
		})
	}
}

// Nodes meeting at the barrier agree on one start, on the shared folder's
// clock, and each knows every node's clock offset.
func TestFleetBarrierMeet(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a1", "a2", "a3"}
	syncs := make([]*results.FleetSync, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 150 * time.Millisecond) // arrivals spread out
			b := &Barrier{Dir: dir, Fleet: &results.Fleet{Launcher: "slurm", JobID: "7", Node: n, Rank: i, Nodes: 3},
				Deadline: 30 * time.Second, Margin: 300 * time.Millisecond, Poll: 20 * time.Millisecond}
			syncs[i], errs[i] = b.meet(context.Background())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
	}
	for i, s := range syncs {
		if !s.StartAt.Equal(syncs[0].StartAt) {
			t.Errorf("%s starts at %v, %s at %v", names[i], s.StartAt, names[0], syncs[0].StartAt)
		}
		if len(s.Offsets) != 3 {
			t.Errorf("%s: offsets %v", names[i], s.Offsets)
		}
	}
	// The first arrival waited for the last, which came about 300ms later.
	if syncs[0].WaitedNS < (250 * time.Millisecond).Nanoseconds() {
		t.Errorf("the first node waited %v, less than the others took to come", time.Duration(syncs[0].WaitedNS))
	}
}

// One node giving up at its deadline makes the others give up too,
// naming who never came, instead of measuring without it.
func TestFleetBarrierGiveUp(t *testing.T) {
	dir := t.TempDir()
	meet := func(node string, rank int, deadline time.Duration) error {
		b := &Barrier{Dir: dir, Fleet: &results.Fleet{Launcher: "slurm", JobID: "8", Node: node, Rank: rank, Nodes: 3},
			Expected: []string{"b1", "b2", "b3"}, Deadline: deadline, Margin: time.Second, Poll: 20 * time.Millisecond}
		_, err := b.meet(context.Background())
		return err
	}
	done := make(chan error, 1)
	began := time.Now()
	go func() { done <- meet("b2", 1, time.Minute) }()
	if err := meet("b1", 0, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "never arrived: b3") {
		t.Fatalf("b1: %v, want an error naming b3", err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "b1 gave up") {
			t.Errorf("b2: %v, want it to follow b1", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("b2 still waits for a fleet b1 has left")
	}
	if time.Since(began) > 15*time.Second {
		t.Errorf("b2 took %v to give up, its deadline was 1m", time.Since(began))
	}
}

// plantedBarrier is a barrier of two nodes, b1 and b2, in dir, as node b1
// sees it, for the tests that plant files where b2's would be.
func plantedBarrier(dir, job string, deadline, poll time.Duration) *Barrier {
	return &Barrier{Dir: dir, Fleet: &results.Fleet{Launcher: "slurm", JobID: job, Node: "b1", Rank: 0, Nodes: 2},
		Expected: []string{"b1", "b2"}, Deadline: deadline, Margin: 100 * time.Millisecond, Poll: poll}
}

// meetWithin runs b.meet and fails the test if it has not returned within
// limit: a barrier stuck on a planted file is what these tests look for.
func meetWithin(t *testing.T, ctx context.Context, b *Barrier, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := b.meet(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("meet still waits after %v (deadline %v)", limit, b.Deadline)
		return nil
	}
}

// unblockFIFO opens path for writing, so a reader stuck opening it (the
// barrier before it refused FIFOs) goes on and the test can end.
func unblockFIFO(t *testing.T, path string) {
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

// What else may sit in the shared barrier folder under another node's
// name is not that node's arrival: a FIFO, a device, a link, a folder or a
// file too big to be one. The node neither hangs on it, nor reads it
// whole, nor counts it: it gives up at its deadline naming b2.
func TestFleetBarrierPlantedArrival(t *testing.T) {
	arrival := `{"node":"b2","rank":1,"clock_offset_ns":0}`
	tests := []struct {
		name  string
		plant func(t *testing.T, path string)
	}{
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
			unblockFIFO(t, path)
		}},
		{"link to /dev/zero", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"link to a file elsewhere", func(t *testing.T, path string) {
			elsewhere := filepath.Join(t.TempDir(), "b2.arrived")
			if err := os.WriteFile(elsewhere, []byte(arrival), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"too big", func(t *testing.T, path string) {
			padded := arrival + strings.Repeat(" ", 1<<20)
			if err := os.WriteFile(path, []byte(padded), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"folder", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			b := plantedBarrier(dir, "31", 500*time.Millisecond, 20*time.Millisecond)
			sync := syncPath(dir, "31")
			if err := os.Mkdir(sync, 0o755); err != nil {
				t.Fatal(err)
			}
			tt.plant(t, filepath.Join(sync, "b2.arrived"))
			err := meetWithin(t, context.Background(), b, 10*time.Second)
			if err == nil || !strings.Contains(err.Error(), "never arrived: b2") {
				t.Fatalf("meet: %v, want it to give up naming b2", err)
			}
		})
	}
}

// ^C at a barrier whose folder holds a FIFO stops the node at once.
func TestFleetBarrierInterruptedAtFIFO(t *testing.T) {
	dir := t.TempDir()
	sync := syncPath(dir, "32")
	if err := os.Mkdir(sync, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(sync, "b2.arrived")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	unblockFIFO(t, fifo)
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { cancel(errors.New("interrupt")) })
	err := meetWithin(t, ctx, plantedBarrier(dir, "32", time.Minute, 20*time.Millisecond), 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "interrupt") {
		t.Fatalf("meet: %v, want the interrupt", err)
	}
}

// A link planted as this node's .gaveup marker is not written through
// when the node gives up: its target stays as it was.
func TestFleetBarrierPlantedGaveUp(t *testing.T) {
	dir := t.TempDir()
	precious := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(precious, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A long poll: the node reads the folder once, before the link is
	// there, and next at its deadline, when it gives up.
	b := plantedBarrier(dir, "33", 400*time.Millisecond, time.Minute)
	time.AfterFunc(150*time.Millisecond, func() {
		if err := os.Symlink(precious, filepath.Join(syncPath(dir, "33"), "b1.gaveup")); err != nil {
			t.Error(err)
		}
	})
	err := meetWithin(t, context.Background(), b, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "never arrived: b2") || !strings.Contains(err.Error(), "b1.gaveup") {
		t.Errorf("meet: %v, want it to give up naming b2, and say its marker could not be written", err)
	}
	if data, err := os.ReadFile(precious); err != nil || string(data) != "keep me" {
		t.Errorf("the link's target now holds %q (%v)", data, err)
	}
}

// A barrier folder that is a link, or not the caller's, is refused: the
// node writes nothing through it.
func TestFleetBarrierPlantedFolder(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, path string) string // the folder whose content must stay empty
		want  string
	}{
		{"link", func(t *testing.T, path string) string {
			target := t.TempDir()
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			return target
		}, "is a link"},
		{"another user's", func(t *testing.T, path string) string {
			if os.Geteuid() != 0 {
				t.Skip("needs root to make a folder another user owns")
			}
			if err := os.Mkdir(path, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return path
		}, "owned by uid 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			watched := tt.plant(t, syncPath(dir, "34"))
			err := meetWithin(t, context.Background(), plantedBarrier(dir, "34", 300*time.Millisecond, 20*time.Millisecond), 10*time.Second)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("meet: %v, want a refusal saying %q", err, tt.want)
			}
			if ents, _ := os.ReadDir(watched); len(ents) > 0 {
				t.Errorf("the node wrote %s into the planted folder", ents[0].Name())
			}
		})
	}
}

// The biggest fleet identity xrcbench accepts (results.MaxFleetNodes
// nodes of the longest names, each node's clock offset) still makes a
// result.json that xrcbench reads: it never writes one it then refuses.
func TestFleetLimitFitsResult(t *testing.T) {
	var list strings.Builder
	for i := range 16 {
		fmt.Fprintf(&list, ",%s%x-[00001-%05d]", strings.Repeat("n", 248), i, results.MaxFleetNodes/16)
	}
	names, err := expandHostlist(list.String()[1:])
	if err != nil || len(names) != results.MaxFleetNodes || len(names[0]) != 255 {
		t.Fatalf("%d names (%d long), %v", len(names), len(names[0]), err)
	}
	offsets := map[string]int64{}
	for _, n := range names {
		offsets[n] = -1 << 62
	}
	r := &results.Result{
		Schema: results.Schema, RunID: "r", Status: results.StatusFailed, Error: "fleet barrier: gave up",
		Config: results.Config{Workload: "steady", Provider: "sim", Procs: 1, Threads: 1, QPs: 1},
		Ops:    map[string]results.OpStats{},
		Fleet: &results.Fleet{Launcher: "slurm", JobID: "1", Node: names[0], Nodes: results.MaxFleetNodes, NodeList: names,
			Sync: &results.FleetSync{Offsets: offsets}},
	}
	dir := t.TempDir()
	if err := results.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, results.FileName)); err == nil {
		t.Logf("result.json of the largest fleet: %d MiB", st.Size()>>20)
	}
	if _, err := results.Load(dir); err != nil {
		t.Errorf("the largest fleet's result.json is refused: %v", err)
	}
}

// TestFleetSyncSecondStep: two srun --fleet-sync steps of one batch job
// are two barriers. The first step's nodes meet; in the second, with b2
// not come, b1 waits and gives up naming it: b2's arrival of the first
// step once counted for the second, which started unsynchronised.
func TestFleetSyncSecondStep(t *testing.T) {
	dir := t.TempDir()
	node := func(name string, rank int, step string) *Barrier {
		b := plantedBarrier(dir, "41", 3*time.Second, 20*time.Millisecond)
		b.Fleet.Node, b.Fleet.Rank, b.Fleet.StepID = name, rank, step
		return b
	}
	// Step 0: both nodes arrive and meet.
	errs := make(chan error, 2)
	for i, name := range []string{"b1", "b2"} {
		go func() { errs <- meetWithin(t, context.Background(), node(name, i, "0"), 20*time.Second) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("step 0: %v", err)
		}
	}
	// Step 1: b1 alone.
	b := node("b1", 0, "1")
	b.Deadline = 500 * time.Millisecond
	err := meetWithin(t, context.Background(), b, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "never arrived: b2") {
		t.Fatalf("step 1 without b2: %v, want it to give up naming b2", err)
	}
	if syncPath(dir, syncKey(b.Fleet)) == syncPath(dir, syncKey(node("b1", 0, "0").Fleet)) {
		t.Error("the two steps share one barrier folder")
	}
}
