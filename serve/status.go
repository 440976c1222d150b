package serve

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Status is the daemon's state as `slatec top` shows it (the "status"
// reply's "status" field).
type Status struct {
	Daemon          string         `json:"daemon"`
	PID             int            `json:"pid"`
	Socket          string         `json:"socket"`
	SMs             int            `json:"sms"`
	Policy          string         `json:"policy"`
	MPS             MPSState       `json:"mps"`
	ResizeTimeoutMs float64        `json:"resize_timeout_ms"`
	UptimeS         float64        `json:"uptime_s"`
	Running         int            `json:"running"`
	Queued          int            `json:"queued"`
	Clients         []ClientStatus `json:"clients"`
	Resizes         []ResizeRecord `json:"resizes"`
}

// ClientStatus is one registered process.
type ClientStatus struct {
	Client   uint64         `json:"client"`
	PID      int            `json:"pid"`
	Name     string         `json:"name"`
	Device   int            `json:"device"`
	Stuck    bool           `json:"stuck"`
	SMs      int            `json:"sms_held"`
	Queued   int            `json:"queued"`
	Launches []LaunchStatus `json:"launches"`
}

// LaunchStatus is one announced launch.
type LaunchStatus struct {
	Launch uint64  `json:"launch"`
	Kernel string  `json:"kernel"`
	Class  string  `json:"class,omitempty"`
	Phase  int     `json:"phase"`
	State  string  `json:"state"` // queued, running
	Range  *Range  `json:"range,omitempty"`
	Stuck  bool    `json:"stuck,omitempty"`
	AgeMs  float64 `json:"age_ms"`
	Blocks uint64  `json:"blocks,omitempty"`
}

// ResizeRecord is one resize command and its outcome: ok (acknowledged
// in time), finished (the launch had ended), timeout (the client was
// marked stuck), late (acknowledged after the timeout), ended (the launch ended
// or its client went away before acknowledging).
type ResizeRecord struct {
	At        time.Time `json:"at"`
	Client    uint64    `json:"client"`
	Name      string    `json:"name"`
	Launch    uint64    `json:"launch"`
	Kernel    string    `json:"kernel"`
	From      Range     `json:"from"`
	To        Range     `json:"to"`
	LatencyUs float64   `json:"latency_us"`
	Outcome   string    `json:"outcome"`
}

// WriteText prints s for humans.
func (s *Status) WriteText(w io.Writer) {
	mps := "MPS active"
	if !s.MPS.Active {
		mps = "MPS NOT active (processes time-slice)"
	}
	fmt.Fprintf(w, "slatec serve %s  pid %d  %s\n", s.Daemon, s.PID, s.Socket)
	fmt.Fprintf(w, "%d SMs  policy %s  %s  resize timeout %gms  up %.0fs\n", s.SMs, s.Policy, mps, s.ResizeTimeoutMs, s.UptimeS)
	fmt.Fprintf(w, "%d running, %d queued, %d clients\n\n", s.Running, s.Queued, len(s.Clients))
	if len(s.Clients) > 0 {
		fmt.Fprintf(w, "%-6s %-8s %-16s %-5s %-6s %-8s %s\n", "CLIENT", "PID", "NAME", "SMS", "QUEUE", "STATE", "LAUNCHES")
		for _, c := range s.Clients {
			state := "ok"
			if c.Stuck {
				state = "STUCK"
			}
			var ls []string
			for _, l := range c.Launches {
				d := fmt.Sprintf("#%d %s", l.Launch, l.Kernel)
				if l.Class != "" {
					d += " " + l.Class
				}
				if l.Range != nil {
					d += " [" + l.Range.String() + "]"
				} else {
					d += " (" + l.State + ")"
				}
				ls = append(ls, d)
			}
			fmt.Fprintf(w, "%-6d %-8d %-16s %-5d %-6d %-8s %s\n", c.Client, c.PID, trunc(c.Name, 16), c.SMs, c.Queued, state, strings.Join(ls, "; "))
		}
		fmt.Fprintln(w)
	}
	if len(s.Resizes) > 0 {
		fmt.Fprintln(w, "recent resizes:")
		rs := append([]ResizeRecord(nil), s.Resizes...)
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].At.After(rs[j].At) })
		for _, r := range rs {
			fmt.Fprintf(w, "  %s  client %d %s #%d %s  %s -> %s  %.0fus  %s\n", r.At.Format("15:04:05.000"), r.Client, trunc(r.Name, 16), r.Launch, trunc(r.Kernel, 32), r.From, r.To, r.LatencyUs, r.Outcome)
		}
	}
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "~"
}
