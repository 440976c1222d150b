package runtime

import (
	"encoding/binary"
	"fmt"
)

// The worker ABI (docs/ABI.md). These constants and encoders are the Go side
// of templates/'s slate_ctl and slate_cfg; change them only together.
const (
	// CtlSize is sizeof(slate_ctl): a 32-byte head (ctlHeadSize: the
	// fields below, which the runtime reads back), RankSMs per-SM worker
	// counts (partial-range launches; zero when no launch is running) and
	// RankSMs bytes of SM places (ctlOffPlace: the device's SM order).
	CtlSize = ctlOffPlace + RankSMs
	// ctlOffPlace is the offset of slate_ctl.sm_place.
	ctlOffPlace = ctlHeadSize + 4*RankSMs
	// RankSMs is SLATE_RANK_SMS.
	RankSMs     = 256
	ctlHeadSize = 32
	// CfgSize is sizeof(slate_cfg); it is passed by value, 8-byte aligned.
	CfgSize = 56

	ctlOffNext    = 0
	ctlOffDone    = 8
	ctlOffRetreat = 16
	ctlOffExited  = 20

	// FlagReset asks the last exiting worker to zero the control block
	// (used by the drop-in launch helpers, never by this runtime, which must
	// keep `next` across a retreat).
	FlagReset = 1
	// FlagProgress makes each worker's leader add every finished task's
	// size to `done`: the runtime sets it on every job (Progress, and the
	// check that a job ran all its logical blocks, read it).
	FlagProgress = 2
	// FlagAllSMs says the range is every SM: workers skip the %smid check.
	FlagAllSMs = 4
	// FlagStatic marks a launch of the static worker k__slate_static (the
	// drop-in launcher's; never this runtime's).
	FlagStatic = 8
	// FlagOneD marks a grid whose y and z are 1: the logical id is blockIdx.x.
	FlagOneD = 16
	// FlagFill (with FlagProgress) keeps a partial range's workers that take
	// no task on their SMs until the job's tasks are done. The serve client
	// sets it under MPS, where other processes' blocks would take the room;
	// this runtime's jobs share one process, whose launches it places itself.
	FlagFill = 32

	// MaxTotal is the largest grid (in blocks) a worker runs: logical ids
	// are 32-bit on the device, and id + workers must not wrap.
	MaxTotal = 0xfff00000

	// workerPrefixParams are the parameters a worker has before the
	// original ones: slate_ctl* and slate_cfg.
	workerPrefixParams = 2
	// cfgParamOffset is where slate_cfg sits in the parameter buffer.
	cfgParamOffset = 8
	// userParamBase is the first offset available to the original parameters.
	userParamBase = cfgParamOffset + CfgSize
)

// Cfg is slate_cfg.
type Cfg struct {
	Total               uint64 // grid_x * grid_y * grid_z
	GridX, GridY, GridZ uint32 // the original grid
	Iters               uint32 // logical blocks per task, >= 1
	SMLow, SMHigh       uint32 // inclusive SM range
	Flags               uint32
	Workers             uint32 // worker blocks launched
	MagicX, ShiftX      uint32 // n / GridX == (umulhi(n, MagicX) + n) >> ShiftX (see Magic)
	MagicY, ShiftY      uint32 // the same for GridY
}

// Magic returns the multiplier and shift that divide every 32-bit n by d
// (d >= 1) as (umulhi(n, m) + n) >> s, computed in 64 bits: the round-up
// method of Granlund and Montgomery, s = ceil(log2 d),
// m = floor(2^32 (2^s - d) / d) + 1. Workers divide logical ids by the grid
// with it: a division routine would cost them registers.
func Magic(d uint32) (m, s uint32) {
	for uint64(1)<<s < uint64(d) {
		s++
	}
	return uint32((uint64(1)<<32*(uint64(1)<<s-uint64(d)))/uint64(d) + 1), s
}

// NewCfg returns the configuration of a grid: its total, shape, division
// constants and FlagOneD; iters, range, flags and workers are the caller's.
func NewCfg(grid Dim3) Cfg {
	c := Cfg{Total: grid.Count(), GridX: grid.X, GridY: grid.Y, GridZ: grid.Z}
	c.MagicX, c.ShiftX = Magic(grid.X)
	c.MagicY, c.ShiftY = Magic(grid.Y)
	if grid.Y == 1 && grid.Z == 1 {
		c.Flags = FlagOneD
	}
	return c
}

// jobCfg is the configuration of a runtime job: the grid's, with its task
// size and workers, counting progress (FlagProgress: Progress and the check
// that every logical block ran read `done`).
func jobCfg(grid Dim3, iters, workers uint32) Cfg {
	c := NewCfg(grid)
	c.Iters, c.Workers = iters, workers
	c.Flags |= FlagProgress
	return c
}

// put encodes c in the device layout (little-endian, as every CUDA host is).
func (c *Cfg) put(b []byte) {
	_ = b[CfgSize-1]
	le := binary.LittleEndian
	le.PutUint64(b[0:], c.Total)
	le.PutUint32(b[8:], c.GridX)
	le.PutUint32(b[12:], c.GridY)
	le.PutUint32(b[16:], c.GridZ)
	le.PutUint32(b[20:], c.Iters)
	le.PutUint32(b[24:], c.SMLow)
	le.PutUint32(b[28:], c.SMHigh)
	le.PutUint32(b[32:], c.Flags)
	le.PutUint32(b[36:], c.Workers)
	le.PutUint32(b[40:], c.MagicX)
	le.PutUint32(b[44:], c.ShiftX)
	le.PutUint32(b[48:], c.MagicY)
	le.PutUint32(b[52:], c.ShiftY)
}

// Ctl is a host copy of slate_ctl.
type Ctl struct {
	Next    uint64 // queue counter; may exceed the total
	Done    uint64 // logical blocks completed
	Retreat uint32
	Exited  uint32
}

func decodeCtl(b []byte) Ctl {
	le := binary.LittleEndian
	return Ctl{
		Next:    le.Uint64(b[ctlOffNext:]),
		Done:    le.Uint64(b[ctlOffDone:]),
		Retreat: le.Uint32(b[ctlOffRetreat:]),
		Exited:  le.Uint32(b[ctlOffExited:]),
	}
}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// D1 is a 1-D shape.
func D1(x uint32) Dim3 { return Dim3{x, 1, 1} }

// Count returns X*Y*Z (0 when any dimension is 0).
func (d Dim3) Count() uint64 { return uint64(d.X) * uint64(d.Y) * uint64(d.Z) }

func (d Dim3) String() string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// SMRange is an inclusive range of SM ids, as in slate_cfg.
type SMRange struct{ Low, High int }

// Count returns the number of SMs in the range.
func (r SMRange) Count() int { return r.High - r.Low + 1 }

func (r SMRange) String() string { return fmt.Sprintf("[%d,%d]", r.Low, r.High) }

// Valid reports whether r is non-empty and inside a device with sms SMs.
func (r SMRange) Valid(sms int) bool { return r.Low >= 0 && r.Low <= r.High && r.High < sms }
