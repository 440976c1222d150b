package runtime

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"unsafe"
)

// smidPTX records the %smid of each block's SM (thread 0 writes
// out[blockIdx.x]), then spins `spin` clock cycles so that the blocks of a
// launch stay resident together. PTX for sm_90, the first architecture with
// thread-block clusters; the driver JITs it.
const smidPTX = `.version 7.8
.target sm_90
.address_size 64
.visible .entry slate_smid(.param .u64 slate_smid_out, .param .u64 slate_smid_spin)
{
	.reg .pred %p<3>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<9>;
	mov.u32 %r1, %tid.x;
	setp.ne.s32 %p1, %r1, 0;
	@%p1 bra $L_done;
	ld.param.u64 %rd1, [slate_smid_out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r2, %ctaid.x;
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd4, %rd2, %rd3;
	mov.u32 %r3, %smid;
	st.global.u32 [%rd4], %r3;
	ld.param.u64 %rd5, [slate_smid_spin];
	mov.u64 %rd6, %clock64;
$L_spin:
	mov.u64 %rd7, %clock64;
	sub.s64 %rd8, %rd7, %rd6;
	setp.lt.s64 %p2, %rd8, %rd5;
	@%p2 bra $L_spin;
$L_done:
	ret;
}
`

// initSMOrder sets the device's SM order (EnvSMOrder) and writes its place
// table into the control-block template. Discovery failing leaves %smid
// order, saying why in SMOrderSource; only a bad EnvSMOrder is an error.
func (d *Device) initSMOrder() error {
	sms := d.info.SMs
	d.order, d.orderSource = identityOrder(sms), ""
	switch mode := os.Getenv(EnvSMOrder); mode {
	case "id":
		d.orderSource = "id (" + EnvSMOrder + "=id)"
	case "", "gpc":
		if sms > 255 {
			d.orderSource = "id: more than 255 SMs (a place is a byte of slate_ctl.sm_place)"
			break
		}
		groups, why := d.discoverGPCs()
		if why != "" {
			d.orderSource = "id: " + why
			break
		}
		order := orderOf(groups)
		if err := checkOrder(order, sms); err != nil {
			d.orderSource = "id: " + err.Error()
			break
		}
		sizes := make([]string, len(groups))
		for i, g := range groups {
			sizes[i] = fmt.Sprint(len(g))
		}
		d.order = order
		d.orderSource = fmt.Sprintf("gpc: %d groups of %s SMs, from thread-block clusters", len(groups), strings.Join(sizes, " "))
	default:
		return fmt.Errorf("runtime: %s=%q: want gpc or id", EnvSMOrder, mode)
	}
	t := placeTable(d.order)
	copy(unsafe.Slice((*byte)(d.consts), constBytes)[constZero+ctlOffPlace:], t[:])
	return nil
}

// discoverGPCs launches clusters of 8 blocks that record their SMs (a
// cluster's blocks run in one GPC) and groups the SMs; why says what
// stopped it.
func (d *Device) discoverGPCs() (groups [][]int, why string) {
	if d.info.Major < 9 {
		return nil, fmt.Sprintf("thread-block clusters need compute capability 9.0, this device is %d.%d", d.info.Major, d.info.Minor)
	}
	if !GreenSupported() || C.slate_cuda_has_clusters() == 0 {
		return nil, "the driver lacks cluster launches or libraries (CUDA 12.4+)"
	}
	lib, err := d.LoadLibrary(&Compiled{CUBIN: append([]byte(smidPTX), 0)})
	if err != nil {
		return nil, fmt.Sprintf("loading the SM probe: %v", err)
	}
	defer lib.Unload()
	k, err := lib.Kernel("slate_smid", ParamLayout{})
	if err != nil {
		return nil, fmt.Sprintf("the SM probe: %v", err)
	}
	const cluster, perSM = 8, 8
	blocks := (d.info.SMs*perSM + cluster - 1) / cluster * cluster
	buf, err := d.Alloc(4 * blocks)
	if err != nil {
		return nil, fmt.Sprintf("the SM probe's buffer: %v", err)
	}
	defer d.Free(buf)
	var clusters [][]uint32
	host := make([]uint32, blocks)
	for rep := range 6 {
		spin := C.longlong(2000 + 1000*rep)
		if err := d.check("cuLaunchKernelEx", C.slate_launch_cluster(d.ctx, C.CUfunction(unsafe.Pointer(k.k)), C.uint(blocks), 32, cluster, nil, C.ulonglong(buf), spin)); err != nil {
			return nil, fmt.Sprintf("launching the SM probe: %v", err)
		}
		if err := d.Synchronize(); err != nil {
			return nil, fmt.Sprintf("running the SM probe: %v", err)
		}
		if err := CopyFromDevice(d, host, buf); err != nil {
			return nil, fmt.Sprintf("reading the SM probe: %v", err)
		}
		for b := 0; b+cluster <= blocks; b += cluster {
			clusters = append(clusters, append([]uint32(nil), host[b:b+cluster]...))
		}
	}
	return smGroupsFromClusters(d.info.SMs, clusters), ""
}

// SMOrder returns the device's SM order: element p is the SM (%smid) at
// place p. An SMRange is a range of places (docs/ABI.md, sm_place).
func (d *Device) SMOrder() []int { return append([]int(nil), d.order...) }

// SMOrderSource says how the order was made: "gpc: ..." (GPC by GPC) or
// "id..." (%smid order) with the reason.
func (d *Device) SMOrderSource() string { return d.orderSource }

// SMsOf returns the SMs (%smid) of range r, ascending.
func (d *Device) SMsOf(r SMRange) []int {
	if r.Low < 0 || r.High >= len(d.order) || r.Low > r.High {
		return nil
	}
	s := append([]int(nil), d.order[r.Low:r.High+1]...)
	slices.Sort(s)
	return s
}
