package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// A process is named by its pid and its start time (in clock ticks since
// boot, /proc/PID/stat field 22): a pid alone may be reused by the time a
// survivor is looked for.
type proc struct {
	pid   int
	start uint64
}

func (p proc) String() string { return strconv.Itoa(p.pid) }

// stat is what the soak reads of /proc/PID/stat.
type stat struct {
	ppid  int
	state byte
	start uint64
}

// readStat reads /proc/PID/stat; ok is false when the process is gone.
func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return stat{}, false
	}
	return parseStat(b)
}

// parseStat parses a /proc/PID/stat line. The command name, in
// parentheses, may hold spaces and parentheses, so the fields are counted
// from its last ')'.
func parseStat(b []byte) (stat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, the state
	if len(f) < 20 {
		return stat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || len(f[0]) != 1 {
		return stat{}, false
	}
	return stat{ppid: ppid, state: f[0][0], start: start}, true
}

// processes reads every process's stat, by pid.
func processes() (map[int]stat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("reading /proc (the soak needs Linux): %w", err)
	}
	all := make(map[int]stat, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			all[pid] = st
		}
	}
	return all, nil
}

// descendants returns the living processes below root, its children first.
func descendants(root int) ([]proc, error) {
	all, err := processes()
	if err != nil {
		return nil, err
	}
	kids := make(map[int][]int)
	for pid, st := range all {
		kids[st.ppid] = append(kids[st.ppid], pid)
	}
	var out []proc
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			if st := all[k]; st.state != 'Z' {
				out = append(out, proc{pid: k, start: st.start})
			}
			queue = append(queue, k)
		}
	}
	return out, nil
}

// alive reports whether p still runs (a zombie has ended).
func alive(p proc) bool {
	st, ok := readStat(p.pid)
	return ok && st.start == p.start && st.state != 'Z'
}
