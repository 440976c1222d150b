package corun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// ReadDocument reads a corun.json written by slatec bench --json.
func ReadDocument(path string) (*Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d Document
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%s: not a slatec bench result: %w", path, err)
	}
	return &d, nil
}

// Combine joins the results of one suite run in several parts (a device
// call runs at most 10 minutes, so the full suite is split with
// --workloads): the same device, SM count, commit, quickness and timing,
// and no workload measured twice in one mode and setting. Rows, sweeps and
// Gantt charts are concatenated in the parts' order; the resize summary
// adds the counts and keeps each percentile's largest value over the parts
// (the raw latencies are not in the files, so the union's own percentiles
// are not known; the larger part's is the conservative figure).
func Combine(parts []*Document) (*Document, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("nothing to combine")
	}
	first := parts[0]
	out := &Document{Device: first.Device, SMs: first.SMs, Commit: first.Commit, Date: first.Date, Quick: first.Quick,
		Profiles: first.Profiles, Timing: first.Timing, SMOrder: first.SMOrder,
		Rows: []Row{}, Unavailable: []UnavailableMode{}, Sweeps: []Sweep{}, Gantts: []Gantt{}}
	seen := map[string]int{}
	for i, d := range parts {
		switch {
		case d.Device != first.Device || d.SMs != first.SMs:
			return nil, fmt.Errorf("part %d is of %s (%d SMs), part 1 of %s (%d SMs): results of two devices do not combine", i+1, d.Device, d.SMs, first.Device, first.SMs)
		case d.Commit != first.Commit:
			return nil, fmt.Errorf("part %d measured commit %s, part 1 %s: results of two builds do not combine", i+1, d.Commit, first.Commit)
		case d.Quick != first.Quick:
			return nil, fmt.Errorf("part %d is a %s run, part 1 a %s one", i+1, quickness(d.Quick), quickness(first.Quick))
		case d.Timing != first.Timing:
			return nil, fmt.Errorf("part %d was timed with %q, part 1 with %q", i+1, d.Timing, first.Timing)
		case d.SMOrder != first.SMOrder:
			return nil, fmt.Errorf("part %d ranged SMs in order %q, part 1 in %q", i+1, d.SMOrder, first.SMOrder)
		}
		if d.Date > out.Date {
			out.Date = d.Date
		}
		if d.Profiles != first.Profiles {
			out.Profiles = "profiles measured in each part"
		}
		for _, r := range d.Rows {
			key := r.Workload + "\x00" + string(r.Mode) + "\x00" + r.Setting
			if j, ok := seen[key]; ok && j != i {
				return nil, fmt.Errorf("%s %s %s is in parts %d and %d", r.Workload, r.Mode, r.Setting, j+1, i+1)
			}
			seen[key] = i
			out.Rows = append(out.Rows, r)
		}
		out.Unavailable = append(out.Unavailable, d.Unavailable...)
		out.Sweeps = append(out.Sweeps, d.Sweeps...)
		out.Gantts = append(out.Gantts, d.Gantts...)
		rl, o := d.ResizeLatency, &out.ResizeLatency
		o.Count += rl.Count
		o.Grows += rl.Grows
		o.P50Us = max(o.P50Us, rl.P50Us)
		o.P99Us = max(o.P99Us, rl.P99Us)
		// Drains shorter than their task make the over-task figure
		// negative: only parts that had such drains count, or a part
		// without any would put its zero above them.
		if rl.WithTask > 0 {
			if o.WithTask == 0 {
				o.OverTaskP99Us = rl.OverTaskP99Us
			} else {
				o.OverTaskP99Us = max(o.OverTaskP99Us, rl.OverTaskP99Us)
			}
		}
		o.WithTask += rl.WithTask
		o.OverTarget += rl.OverTarget
	}
	return out, nil
}

func quickness(q bool) string {
	if q {
		return "--quick"
	}
	return "full"
}
