package vm

// The guest's transcript: what test/vm/guest-check.sh sends back on the
// second serial port, framed so that kernel messages, a cut-off guest or a
// stray byte cannot pass for a step's output.

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// step is one command the guest ran: its exit status and its output.
type step struct {
	rc          int
	out, errOut string
}

// transcript is every step by name, in the order the guest ran them.
type transcript struct {
	steps map[string]*step
	order []string
	// done: the guest reached its last line (XRCVM DONE); a transcript
	// without it was cut short (timeout, crash, full disk).
	done bool
}

// parseTranscript reads the framed lines. Anything outside a frame is
// ignored; a malformed frame is an error, not a silently missing step.
func parseTranscript(r io.Reader) (*transcript, error) {
	tr := &transcript{steps: map[string]*step{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var cur string // the section being read, "" outside one
	var body strings.Builder
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		f := strings.Fields(text)
		if cur != "" {
			if len(f) == 3 && f[0] == "XRCVM" && f[1] == "END" && f[2] == cur {
				raw, err := base64.StdEncoding.DecodeString(body.String())
				if err != nil {
					return nil, fmt.Errorf("line %d: section %s: %v", line, cur, err)
				}
				name, stream, _ := strings.Cut(cur, ".")
				st := tr.steps[name]
				if st == nil {
					return nil, fmt.Errorf("line %d: section %s before its STEP line", line, cur)
				}
				switch stream {
				case "out":
					st.out = string(raw)
				case "err":
					st.errOut = string(raw)
				default:
					return nil, fmt.Errorf("line %d: section %s: not .out or .err", line, cur)
				}
				cur = ""
				body.Reset()
				continue
			}
			if len(f) > 0 && f[0] == "XRCVM" {
				return nil, fmt.Errorf("line %d: %q inside section %s", line, text, cur)
			}
			body.WriteString(strings.TrimSpace(text))
			continue
		}
		if len(f) == 0 || f[0] != "XRCVM" {
			continue
		}
		switch {
		case len(f) == 4 && f[1] == "STEP":
			rc, err := strconv.Atoi(f[3])
			if err != nil {
				return nil, fmt.Errorf("line %d: exit status %q", line, f[3])
			}
			if tr.steps[f[2]] != nil {
				return nil, fmt.Errorf("line %d: step %s twice", line, f[2])
			}
			tr.steps[f[2]] = &step{rc: rc}
			tr.order = append(tr.order, f[2])
		case len(f) == 3 && f[1] == "BEGIN":
			cur = f[2]
		case len(f) == 2 && f[1] == "DONE":
			tr.done = true
		case len(f) == 2 && f[1] == "START":
		default:
			return nil, fmt.Errorf("line %d: unknown frame %q", line, text)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != "" {
		return nil, fmt.Errorf("section %s not closed: the transcript was cut short", cur)
	}
	return tr, nil
}
