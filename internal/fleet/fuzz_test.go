package fleet

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// FuzzFleetIdentity: whatever a launcher's environment holds, a fleet's
// identity is a node name fit for a folder, at most results.MaxFleetNodes
// nodes, listed or counted, and a rank below the count; else a refusal
// (errFleet) of one short line. A few bytes must not stand for more.
func FuzzFleetIdentity(f *testing.F) {
	f.Add(uint8(0), "3", "n[01-03],gpu1", "2", "n02")
	f.Add(uint8(0), "2000000000", "n1", "0", "n1")
	f.Add(uint8(0), "2", "n[1-100000,1-100000,1-100000]", "0", "n1")
	f.Add(uint8(0), "2", "n["+strings.Repeat("0", 300)+"1-2]", "1", "")
	f.Add(uint8(1), "65537", "1", "0", "1")
	f.Add(uint8(2), "", "", "5", "../etc")
	f.Fuzz(func(t *testing.T, launcher uint8, nodes, list, rank, node string) {
		var env map[string]string
		switch launcher % 3 {
		case 0:
			env = map[string]string{"SLURM_JOB_ID": "7", "SLURM_PROCID": rank, "SLURM_NNODES": nodes,
				"SLURM_JOB_NODELIST": list, "SLURMD_NODENAME": node}
		case 1:
			env = map[string]string{"OMPI_COMM_WORLD_RANK": rank, "OMPI_COMM_WORLD_SIZE": nodes,
				"OMPI_COMM_WORLD_LOCAL_SIZE": list, "PMIX_NAMESPACE": node}
		default:
			env = map[string]string{"PMIX_RANK": rank, "PMIX_NAMESPACE": node}
		}
		id, err := Identity(func(k string) string { return env[k] }, "host")
		if err != nil {
			if !errors.Is(err, errFleet) || strings.ContainsAny(err.Error(), "\n\r") || len(err.Error()) > 400 {
				t.Fatalf("not a one-line refusal: %.500q", err)
			}
			return
		}
		if !nodeName.MatchString(id.Node) || id.Nodes < 0 || id.Nodes > results.MaxFleetNodes ||
			len(id.NodeList) > results.MaxFleetNodes || (id.Nodes > 0 && id.Rank >= id.Nodes) {
			t.Fatalf("accepted %+v", id)
		}
		for _, n := range id.NodeList {
			if !nodeName.MatchString(n) {
				t.Fatalf("node list names %q", n)
			}
		}
	})
}

// FuzzReadArrivals: whatever the shared barrier folder holds (files of
// any size, links, FIFOs, folders, under any name), reading it returns
// at once, without following a link, with only arrivals that can be the
// job's: a regular file named after its node, a rank below the count,
// one node per rank.
//
// Each line of the input is one entry: its first byte the kind, the rest
// name, a tab, and the content.
func FuzzReadArrivals(f *testing.F) {
	f.Add(uint8(2), []byte("fb1.arrived\t{\"node\":\"b1\",\"rank\":0}\nfb2.arrived\t{\"node\":\"b2\",\"rank\":1}"))
	f.Add(uint8(2), []byte("fb1.arrived\t{\"node\":\"b1\",\"rank\":1}\nfb2.arrived\t{\"node\":\"b2\",\"rank\":1}\nfb3.arrived\t{\"node\":\"b3\",\"rank\":7}"))
	f.Add(uint8(3), []byte("pb1.arrived\t\nzb2.arrived\t\nlb3.arrived\t{\"node\":\"b3\",\"rank\":2}\ndb4.arrived\t"))
	f.Add(uint8(2), []byte("Bb1.arrived\t{\"node\":\"b1\",\"rank\":0}\nfb2.gaveup\t\nlb3.gaveup\t\nf.b4.arrived\t{\"node\":\".b4\",\"rank\":1}"))
	f.Fuzz(func(t *testing.T, nodes uint8, data []byte) {
		outside := filepath.Join(t.TempDir(), "outside")
		dir := filepath.Join(t.TempDir(), "sync")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		regular := map[string]int64{} // the regular files planted, by name, and their sizes
		for i, line := range bytes.Split(data, []byte("\n")) {
			if i == 32 || len(line) == 0 {
				break
			}
			name, content, _ := strings.Cut(string(line[1:]), "\t")
			path := filepath.Join(dir, name)
			if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
				continue
			}
			var err error
			switch line[0] {
			case 'f': // a file
				err = os.WriteFile(path, []byte(content), 0o644)
			case 'B': // a file too big to be an arrival
				err = os.WriteFile(path, append([]byte(content), bytes.Repeat([]byte(" "), maxArrivalFile)...), 0o644)
			case 'l': // a link to a file elsewhere holding the content
				if err = os.WriteFile(outside, []byte(content), 0o644); err == nil {
					err = os.Symlink(outside, path)
				}
			case 'z':
				err = os.Symlink("/dev/zero", path)
			case 'p':
				err = syscall.Mkfifo(path, 0o644)
			case 'd':
				err = os.Mkdir(path, 0o755)
			default:
				continue
			}
			if err != nil {
				continue // the name was taken: the first entry stays
			}
			if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
				regular[name] = st.Size()
			}
		}
		d, err := openSyncDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.close()
		fd, err := d.dup()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan folder, 1)
		go func() { done <- readArrivals(fd, int(nodes)) }()
		var got folder
		select {
		case got = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("reading the barrier's folder hangs")
		}
		if got.err != nil {
			t.Fatal(got.err)
		}
		ranks := map[int]bool{}
		for node, a := range got.arrived {
			size, ok := regular[node+".arrived"]
			if !ok || size > maxArrivalFile || a.Node != node || a.Rank < 0 || a.Rank >= int(nodes) || ranks[a.Rank] {
				t.Fatalf("counted %q: %+v (a regular file of %d bytes: %v)", node, a, size, ok)
			}
			ranks[a.Rank] = true
		}
		for _, node := range got.gaveUp {
			if _, ok := regular[node+".gaveup"]; !ok {
				t.Fatalf("%q counted as gave up without a file", node)
			}
		}
	})
}
