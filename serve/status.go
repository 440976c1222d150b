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
	Running         int            `json:"running"` // served launches in flight, all clients
	Clients         []ClientStatus `json:"clients"`
	Resizes         []ResizeRecord `json:"resizes"`
}

// ClientStatus is one registered process and its grant.
type ClientStatus struct {
	Client   uint64 `json:"client"`
	PID      int    `json:"pid"`
	Name     string `json:"name"`
	Device   int    `json:"device"`
	Stuck    bool   `json:"stuck"`
	SMs      int    `json:"sms_held"`
	Range    Range  `json:"range"`
	Epoch    uint64 `json:"epoch"`
	Alone    bool   `json:"alone"`    // its launches run natively on the whole GPU (alone, or overlapping)
	Acked    bool   `json:"acked"`    // it acknowledged its current grant
	Launches uint64 `json:"launches"` // launches since hello (its last load note)
	InFlight int    `json:"inflight"` // served launches running (its last load note)
	// NativePending: its native launches made while sharing have not all
	// ended (its last load note).
	NativePending bool `json:"native_pending,omitempty"`
	// Held: its native launches keep their budget of GPU work queued ahead
	// (its last load note): busy.
	Held   bool   `json:"held,omitempty"`
	Kernel string `json:"kernel,omitempty"`
	Class  string `json:"class,omitempty"`
	Idle   bool   `json:"idle,omitempty"` // no launch for the daemon's idle time: its share went to the others
	// Busy is the share of recent time, 0 to 1, its announced launches kept
	// the GPU working at its kernel's profiled time a launch on its grant
	// (absent: not known yet, or no profile). A set is split only while
	// each is busy (serve.MinBusy).
	Busy *float64 `json:"busy,omitempty"`
}

// ResizeRecord is one grant change of a client and its outcome: ok
// (acknowledged within the resize timeout), timeout (the client was marked
// stuck), late (acknowledged after the timeout). LatencyUs is the daemon's
// time from the push to the ack; DrainUs the client's own, from receiving
// the grant to its served launches running on the new range; NativeUs,
// when nonzero, until its native launches in flight (it was alone) ended;
// TaskUs, when nonzero, one task of the launches a retreat moved (a drain
// is within about one task: the resize target is one task + 100 us);
// DeliverUs, when the client said when it received the grant (recv_ns),
// the push to that receipt, so that DeliverUs + DrainUs is the command's
// way to the drained range.
type ResizeRecord struct {
	At        time.Time `json:"at"`
	Client    uint64    `json:"client"`
	Name      string    `json:"name"`
	Epoch     uint64    `json:"epoch"`
	Kernel    string    `json:"kernel,omitempty"`
	From      Range     `json:"from"`
	To        Range     `json:"to"`
	Moved     int       `json:"moved"`
	LatencyUs float64   `json:"latency_us"`
	DrainUs   uint64    `json:"drain_us"`
	NativeUs  uint64    `json:"native_us,omitempty"`
	TaskUs    uint64    `json:"task_us,omitempty"`
	DeliverUs float64   `json:"deliver_us,omitempty"`
	// WrittenUs: the push to its frame's write (its start; 0: queued); WokeUs: the
	// push to the client's listener waking with it (its ack's woke_ns).
	WrittenUs float64 `json:"written_us,omitempty"`
	WokeUs    float64 `json:"woke_us,omitempty"`
	Outcome   string  `json:"outcome"`
}

// WriteText prints s for humans.
func (s *Status) WriteText(w io.Writer) {
	// Under MPS each launch numbers its SMs itself, so clients bind a range
	// as a count from 0 (docs/SERVE.md, "MPS"): say so beside RANGE.
	mps := "MPS active (ranges bind as SM counts)"
	if !s.MPS.Active {
		mps = "MPS NOT active (processes time-slice)"
	}
	fmt.Fprintf(w, "slatec serve %s  pid %d  %s\n", s.Daemon, s.PID, s.Socket)
	fmt.Fprintf(w, "%d SMs  policy %s  %s  resize timeout %gms  up %.0fs\n", s.SMs, s.Policy, mps, s.ResizeTimeoutMs, s.UptimeS)
	fmt.Fprintf(w, "%d served launches running, %d clients\n\n", s.Running, len(s.Clients))
	if len(s.Clients) > 0 {
		fmt.Fprintf(w, "%-6s %-8s %-16s %-9s %-5s %-6s %-9s %-8s %s\n", "CLIENT", "PID", "NAME", "RANGE", "SMS", "EPOCH", "LAUNCHES", "STATE", "KERNEL")
		for _, c := range s.Clients {
			state := "ok"
			switch {
			case c.Stuck:
				state = "STUCK"
			case c.Idle:
				state = "idle" // its share went to the others; native when it launches again
			case c.Alone:
				state = "native" // alone, or overlapping unplanned processes
			case !c.Acked:
				state = "moving"
			}
			k := c.Kernel
			if c.Class != "" {
				k += " " + c.Class
			}
			if c.Held {
				k += " (native running, held)"
			} else if c.NativePending {
				k += " (native running)"
			}
			if c.InFlight > 0 {
				k += fmt.Sprintf(" (%d running)", c.InFlight)
			}
			if c.Busy != nil {
				k += fmt.Sprintf(" busy %.2f", *c.Busy)
			}
			line := fmt.Sprintf("%-6d %-8d %-16s %-9s %-5d %-6d %-9d %-8s %s", c.Client, c.PID, trunc(c.Name, 16), c.Range, c.SMs, c.Epoch, c.Launches, state, k)
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
		fmt.Fprintln(w)
	}
	if len(s.Resizes) > 0 {
		fmt.Fprintln(w, "recent resizes:")
		rs := append([]ResizeRecord(nil), s.Resizes...)
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].At.After(rs[j].At) })
		for _, r := range rs {
			extra := ""
			if r.NativeUs > 0 { // the ack waited for native launches, which cannot move
				extra = fmt.Sprintf("  native %dus", r.NativeUs)
			}
			if r.TaskUs > 0 { // one task of the moved launches: the drain's yardstick
				extra += fmt.Sprintf("  task %dus", r.TaskUs)
			}
			fmt.Fprintf(w, "  %s  client %d %s epoch %d  %s -> %s  moved %d  drain %dus%s  ack %.0fus  %s\n", r.At.Format("15:04:05.000"), r.Client, trunc(r.Name, 16), r.Epoch, r.From, r.To, r.Moved, r.DrainUs, extra, r.LatencyUs, r.Outcome)
		}
	}
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "~"
}
