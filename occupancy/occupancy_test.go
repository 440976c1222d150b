package occupancy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-computed against the rules of cuda_occupancy.h for sm_90: 64 warps
// and 32 blocks per SM; registers per warp rounded up to 256 and 16384 per
// sub-partition (4 of them); shared memory + 1 KB reserved per block,
// rounded up to 128 bytes, out of 228 KB.
func TestSM90(t *testing.T) {
	for _, tc := range []struct {
		name   string
		k      Kernel
		blocks int
		occ    float64
		lim    Limiter
	}{
		// 8 warps; 1024 regs/warp -> 16 warps per sub-partition -> 64/8 = 8.
		{"256x32regs", Kernel{Threads: 256, Registers: 32}, 8, 1, LimitWarps},
		// 2048 regs/warp -> 8 per sub-partition -> 32 warps -> 4 blocks.
		{"256x64regs", Kernel{Threads: 256, Registers: 64}, 4, 0.5, LimitRegisters},
		// 40*32 = 1280 regs/warp -> 12 per sub-partition -> 48 warps -> 12 blocks of 4 warps.
		{"128x40regs", Kernel{Threads: 128, Registers: 40}, 12, 0.75, LimitRegisters},
		// 72*32 = 2304 regs/warp * 32 warps = 73728 > 65536: cannot launch.
		{"1024x72regs", Kernel{Threads: 1024, Registers: 72}, 0, 0, LimitRegisters},
		// 1024 threads at 64 regs: 2048*32 = 65536 fits exactly; 8 warps/sub -> 32 warps -> 1 block.
		{"1024x64regs", Kernel{Threads: 1024, Registers: 64}, 1, 0.5, LimitRegisters},
		// 48 KB + 1 KB = 50176 bytes -> 233472/50176 = 4 blocks of 8 warps.
		{"256x48KB", Kernel{Threads: 256, Registers: 16, StaticShared: 48 << 10}, 4, 0.5, LimitShared},
		// 2 warps per block: 32 by warps, 32 by blocks; warps reported first.
		{"64x16regs", Kernel{Threads: 64, Registers: 16}, 32, 1, LimitWarps},
		// one warp per block: the 32-block limit gives 32 warps.
		{"32threads", Kernel{Threads: 32, Registers: 16}, 32, 0.5, LimitBlocks},
		// 255*32 = 8160 -> 8192 regs/warp -> 2 per sub-partition -> 8 warps -> 2 blocks of 3 warps.
		{"96x255regs", Kernel{Threads: 96, Registers: 255}, 2, 6.0 / 64, LimitRegisters},
		// 100 KB dynamic + 2 KB static + 1 KB = 105472 -> 2 blocks.
		{"256xdyn100KB", Kernel{Threads: 256, Registers: 32, StaticShared: 2048, DynamicShared: 100 << 10}, 2, 0.25, LimitShared},
		// More than 227 KB per block: cannot launch.
		{"shared too big", Kernel{Threads: 128, Registers: 32, DynamicShared: 228 << 10}, 0, 0, LimitShared},
		// 100 threads round up to 4 warps; 16 blocks by warps.
		{"100threads", Kernel{Threads: 100, Registers: 32}, 16, 1, LimitWarps},
		// 4 KB + 1 KB = 5120 -> 45 blocks by shared, 32 by blocks, 8 by warps.
		{"256x4KB", Kernel{Threads: 256, Registers: 30, StaticShared: 4096}, 8, 1, LimitWarps},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := SM90.Compute(tc.k)
			require.NoError(t, err)
			assert.Equal(t, tc.blocks, r.BlocksPerSM)
			assert.InDelta(t, tc.occ, r.Occupancy, 1e-12)
			assert.Equal(t, tc.lim, r.Limiter)
		})
	}
}

func TestComputeRejects(t *testing.T) {
	for _, k := range []Kernel{{Threads: 0}, {Threads: 1025}, {Threads: 32, Registers: 256}, {Threads: 32, StaticShared: -1}} {
		_, err := SM90.Compute(k)
		assert.Error(t, err, "%+v", k)
	}
}

const ptxasOut = `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN2ns1kIfEEvPT_i' for 'sm_90'
ptxas info    : Function properties for _ZN2ns1kIfEEvPT_i
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 256 bytes smem
ptxas info    : Compile time = 2.560 ms
ptxas info    : Compiling entry function 'triad' for 'sm_90'
ptxas info    : Function properties for triad
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 31 registers, used 0 barriers, 400 bytes cmem[0]
ptxas info    : Compiling entry function '_Z11sgemm_tilediiifPKfS0_fPf' for 'sm_90'
ptxas info    : Used 32 registers, used 1 barriers, 2048 bytes smem
ptxas info    : Compiling entry function '_ZN12_GLOBAL__N_15clampEPfi' for 'sm_90'
ptxas info    : Used 8 registers
`

func TestParsePtxas(t *testing.T) {
	us := ParsePtxas(ptxasOut)
	require.Len(t, us, 4)
	assert.Equal(t, Usage{Mangled: "_ZN2ns1kIfEEvPT_i", Name: "ns::k", Template: true, Arch: "sm_90", Registers: 10, Barriers: 1, StaticShared: 256}, us[0])
	assert.Equal(t, Usage{Mangled: "triad", Name: "triad", Arch: "sm_90", Registers: 31, StackFrame: 8, SpillStores: 4, SpillLoads: 4}, us[1])
	assert.Equal(t, "sgemm_tiled", us[2].Name)
	assert.Equal(t, 2048, us[2].StaticShared)
	assert.Equal(t, "clamp", us[3].Name)
	assert.Equal(t, 8, us[3].Registers)
}

func TestDemangle(t *testing.T) {
	for sym, want := range map[string]string{
		"_Z10reduce_sumILi256EEvPKfPfi": "reduce_sum",
		"_ZN1a1b1cEv":                   "a::b::c",
		"plain":                         "plain",
		"_Zbogus":                       "_Zbogus",
		"_Z99x":                         "_Z99x",
	} {
		got, _ := Demangle(sym)
		assert.Equal(t, want, got, sym)
	}
}
