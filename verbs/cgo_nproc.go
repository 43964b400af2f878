//go:build cgo

package verbs

// Under a process limit of a few threads (ulimit -u 3-5 for a user with
// nothing else running) the Go runtime aborts in its own start-up, before
// main or any init of ours, with a dump of every goroutine: it cannot start
// the threads it makes for itself. A C constructor runs when the binary is
// loaded, before the runtime starts, so the refusal of xrcbench's
// main.refuseLimits is said here too, for its measuring commands (the only
// ones a cgo build needs, as a binary without cgo measures nothing). It is
// here because cgo is confined to verbs, which every measuring binary
// links; a binary whose first argument is no such command (a test binary,
// whose arguments are flags) is left alone. MIN_PROCESSES is
// host.MinProcesses, and the command names are xrcbench's main.measuring:
// cmd/xrcbench's TestMeasuringCommandsInC holds them together.

/*
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#define MIN_PROCESSES 16

static const char *xb_measuring[] = {"run", "sweep", "conform", "devices", "calibrate", "qualify", "__worker", 0};

static int xb_is_measuring(const char *cmd) {
	for (int i = 0; xb_measuring[i]; i++) {
		if (strcmp(cmd, xb_measuring[i]) == 0) {
			return 1;
		}
	}
	return 0;
}

__attribute__((constructor)) static void xb_refuse_nproc(int argc, char **argv) {
	struct rlimit lim;
	int i = 1;
	while (i < argc && argv[i][0] == '-') {
		i++;
	}
	if (i >= argc || !xb_is_measuring(argv[i]) || getuid() == 0 || getrlimit(RLIMIT_NPROC, &lim) != 0 ||
	    lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= MIN_PROCESSES) {
		return;
	}
	static const char msg[] = "xrcbench: the process limit (ulimit -u, prlimit --nproc) is below 16: it counts threads, "
				  "and xrcbench's coordinator and each worker start several (the Go runtime's, and one per --threads); "
				  "no run starts under 16: raise or lift the limit\n";
	ssize_t n = write(2, msg, sizeof msg - 1);
	(void)n;
	_exit(1);
}

static const char *xb_measuring_at(int i) { return xb_measuring[i]; }
static int xb_min_processes(void) { return MIN_PROCESSES; }
*/
import "C"

// ProcessLimitCommands and ProcessLimitFloor are what the constructor
// holds: the commands it refuses under the floor, for xrcbench's test
// that they are its own.
func ProcessLimitCommands() []string {
	var out []string
	for i := 0; ; i++ {
		p := C.xb_measuring_at(C.int(i))
		if p == nil {
			return out
		}
		out = append(out, C.GoString(p))
	}
}

func ProcessLimitFloor() int { return int(C.xb_min_processes()) }
